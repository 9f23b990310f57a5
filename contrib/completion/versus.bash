# bash completion for versus-run and versus.
# Everything offered is read from the programs themselves, so it cannot drift from them:
# versus-run's options, their values and its patterns from `versus-run --help --json` (the
# table its command line is parsed with), transports from --list --json, subcommands and
# their options from `versus ... --help`.

_versus_run_cache_json=""

# versus-run's table asked: options | patterns | variants | value OPTION (what OPTION takes:
# "choices" and the choices, "kind" and the kind, or nothing for a flag or an unknown option)
_versus_run_ask()
{
    python3 -c 'import json, sys
doc = json.loads(sys.argv[1])
what, opts = sys.argv[2:], doc.get("options", [])
if what[0] == "options":
    for o in opts:
        print("--" + o["name"])
        if o.get("short"):
            print("-" + o["short"])
elif what[0] == "patterns":
    print("\n".join(p["name"] for p in doc.get("patterns", [])))
elif what[0] == "variants":
    print("\n".join(sorted({v for p in doc.get("patterns", []) for v in p.get("variants", [])})))
else:
    w = what[1]
    for o in opts:
        if o.get("value") and (w == "--" + o["name"] or (o.get("short") and w == "-" + o["short"])):
            print(*(["choices"] + o["choices"] if o.get("choices") else ["kind", o["kind"], o["value"]]))' \
        "$_versus_run_cache_json" "$@" 2>/dev/null
}

_versus_run()
{
    local cur prev
    cur=${COMP_WORDS[COMP_CWORD]}
    prev=${COMP_WORDS[COMP_CWORD-1]}
    local prog=${COMP_WORDS[0]}
    if [[ -z $_versus_run_cache_json ]]; then
        _versus_run_cache_json=$("$prog" --help --json 2>/dev/null) || return
    fi
    if [[ $prev == -* ]]; then
        local takes
        takes=($(_versus_run_ask value "$prev"))
        case ${takes[0]}:${takes[1]} in
            choices:*)
                COMPREPLY=($(compgen -W "${takes[*]:1}" -- "$cur")); return ;;
            kind:transport)
                local names
                names=$("$prog" --list --json 2>/dev/null | python3 -c 'import json, sys
for m in json.load(sys.stdin):
    if m.get("loads"):
        print(m.get("name", ""))' 2>/dev/null)
                COMPREPLY=($(compgen -W "$names" -- "$cur")); return ;;
            kind:pattern|kind:variant)
                COMPREPLY=($(compgen -W "$(_versus_run_ask "${takes[1]}s")" -- "$cur")); return ;;
            kind:*)
                [[ ${takes[2]} == FILE || ${takes[2]} == DIR ]] && COMPREPLY=($(compgen -f -- "$cur"))
                return ;;
        esac
    fi
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$(_versus_run_ask options)" -- "$cur"))
    fi
}

_versus()
{
    local cur prog=${COMP_WORDS[0]}
    cur=${COMP_WORDS[COMP_CWORD]}
    if (( COMP_CWORD == 1 )); then
        local cmds
        # the subcommands: the four-space-indented names under "positional arguments"
        cmds=$("$prog" --help 2>/dev/null | sed -n 's/^    \([a-z][a-z-]*\)\( .*\)\{0,1\}$/\1/p')
        COMPREPLY=($(compgen -W "$cmds" -- "$cur"))
        return
    fi
    if [[ $cur == -* ]]; then
        local sub=("${COMP_WORDS[@]:1:COMP_CWORD-1}")
        local opts
        opts=$("$prog" "${sub[@]}" --help 2>/dev/null | grep -oE '(^|[ ,\[])--?[A-Za-z][A-Za-z0-9-]*' | tr -d ' ,[' | sort -u)
        COMPREPLY=($(compgen -W "$opts" -- "$cur"))
        return
    fi
    COMPREPLY=($(compgen -f -- "$cur"))
}

complete -F _versus_run versus-run
complete -F _versus versus
