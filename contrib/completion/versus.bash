# bash completion for versus-run and versus.
# Everything offered is read from the programs themselves, so it cannot drift from them:
# options from --help, transports from --list --json, patterns and variants from --help's
# "Patterns" table, subcommands and their options from `versus ... --help`.

_versus_run_cache_options=""
_versus_run_cache_patterns=""

_versus_run_words()
{
    local prog=$1
    if [[ -z $_versus_run_cache_options ]]; then
        local help
        help=$("$prog" --help 2>/dev/null) || return
        _versus_run_cache_options=$(grep -oE '(^|[ ,])--?[A-Za-z][A-Za-z0-9-]*' <<<"$help" | tr -d ' ,' | sort -u)
        _versus_run_cache_patterns=$(sed -n '/^Patterns$/,/^$/p' <<<"$help" | awk 'NR > 1 && NF {print $1}')
    fi
}

_versus_run()
{
    local cur prev
    cur=${COMP_WORDS[COMP_CWORD]}
    prev=${COMP_WORDS[COMP_CWORD-1]}
    local prog=${COMP_WORDS[0]}
    _versus_run_words "$prog"
    case $prev in
        -t|--transport)
            local names
            names=$("$prog" --list --json 2>/dev/null | python3 -c 'import json, sys
for m in json.load(sys.stdin):
    if m.get("loads"):
        print(m.get("name", ""))' 2>/dev/null)
            COMPREPLY=($(compgen -W "$names" -- "$cur")); return ;;
        -p|--pattern)
            COMPREPLY=($(compgen -W "$_versus_run_cache_patterns" -- "$cur")); return ;;
        -V|--variant)
            COMPREPLY=($(compgen -W "blocking nonblocking" -- "$cur")); return ;;
        --order)
            COMPREPLY=($(compgen -W "sequential interleaved shuffled" -- "$cur")); return ;;
        --launch)
            COMPREPLY=($(compgen -W "local" -- "$cur")); return ;;
        -o|--out|--rendezvous-dir)
            COMPREPLY=($(compgen -f -- "$cur")); return ;;
    esac
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$_versus_run_cache_options" -- "$cur"))
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
