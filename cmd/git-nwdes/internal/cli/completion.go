package cli

import (
	"fmt"

	"github.com/urfave/cli/v2"
)

// The completion scripts ask git-nwdes itself for the candidates (urfave's
// --generate-bash-completion: verbs, sub-verbs, and flags after a "-"), so
// they never go stale. Each finds where the nwdes words start, so that
// `git nwdes …`, `git -C dir nwdes …` and `git-nwdes …` all complete.
const bashCompletion = `# bash completion for git nwdes: source it, or let make install place it.
_git_nwdes_args() {
	local i start=-1
	for ((i = 0; i < COMP_CWORD; i++)); do
		case "${COMP_WORDS[i]}" in
		nwdes | git-nwdes | */git-nwdes) start=$((i + 1)) ;;
		esac
	done
	((start < 0)) && return 1
	local cur="${COMP_WORDS[COMP_CWORD]}"
	local args=("${COMP_WORDS[@]:start:COMP_CWORD-start}")
	[[ "$cur" == -* ]] && args+=("$cur")
	local opts
	opts=$(git-nwdes "${args[@]}" --generate-bash-completion 2>/dev/null)
	COMPREPLY=($(compgen -W "$opts" -- "$cur"))
}
# git's own completion calls _git_nwdes for "git nwdes".
_git_nwdes() { _git_nwdes_args; }
complete -o default -F _git_nwdes_args git-nwdes
`

const zshCompletion = `#compdef git-nwdes
# zsh completion for git nwdes: put it on $fpath as _git-nwdes; zsh's git
# completion calls _git-nwdes for "git nwdes" (declare the command with
# zstyle ':completion:*:*:git:*' user-commands nwdes:'nwdes acceptance').
_git-nwdes() {
	local -a args opts
	local i start=0
	for ((i = 1; i < CURRENT; i++)); do
		case ${words[i]} in
		nwdes | git-nwdes | */git-nwdes) start=$((i + 1)) ;;
		esac
	done
	((start == 0)) && return 1
	args=(${words[start,CURRENT-1]})
	[[ ${words[CURRENT]} == -* ]] && args+=(${words[CURRENT]})
	opts=(${(f)"$(git-nwdes $args --generate-bash-completion 2>/dev/null)"})
	compadd -a opts
}
_git-nwdes "$@"
`

const fishCompletion = `# fish completion for git nwdes.
function __git_nwdes_complete
	set -l tokens (commandline -opc)
	set -l args
	set -l seen 0
	for t in $tokens
		if test $seen -eq 1
			set args $args $t
		else if contains -- $t nwdes git-nwdes
			set seen 1
		end
	end
	set -l cur (commandline -ct)
	if string match -q -- '-*' $cur
		set args $args $cur
	end
	git-nwdes $args --generate-bash-completion 2>/dev/null
end
complete -c git -n '__fish_seen_subcommand_from nwdes' -f -a '(__git_nwdes_complete)'
complete -c git-nwdes -f -a '(__git_nwdes_complete)'
`

func (s *session) completionCmd() *cli.Command {
	return &cli.Command{
		Name:      "completion",
		Usage:     "print the shell completion script for bash, zsh or fish",
		UsageText: "git nwdes completion bash|zsh|fish",
		Description: `Completes verbs, sub-verbs and flags, for git nwdes (through git's own
completion) and for git-nwdes. make install puts each script where its
shell looks; or load one by hand:

EXAMPLES
   source <(git nwdes completion bash)          # in ~/.bashrc
   git nwdes completion zsh > ~/.zfunc/_git-nwdes
   git nwdes completion fish > ~/.config/fish/completions/git-nwdes.fish
` + exitStatus(),
		Action: func(c *cli.Context) error {
			scripts := map[string]string{"bash": bashCompletion, "zsh": zshCompletion, "fish": fishCompletion}
			script, ok := scripts[c.Args().First()]
			if c.NArg() != 1 || !ok {
				return usagef("name one shell: bash, zsh or fish")
			}
			_, err := fmt.Fprint(s.env.Stdout, script)
			return err
		},
	}
}
