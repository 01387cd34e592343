# SPDX-License-Identifier: GPL-2.0-or-later
# bash completion for the xfskit tools.  Options come from each tool's
# own --help at completion time, so they never drift from the tool;
# operands complete as files (images and devices), and option values
# that name files (-z, -p, -l, --spill-dir, ...) as files too.
# Installed as completions/xfskit-repair and linked for the other tools.

_xfskit_options()
{
	"$1" --help 2>&1 |
		grep -oE '(^|[][ ,|])--?[A-Za-z][-A-Za-z0-9]*=?' |
		sed -E 's/^[][ ,|]//' | sort -u
}

_xfskit()
{
	local cur=${COMP_WORDS[COMP_CWORD]}
	local prev=${COMP_WORDS[COMP_CWORD-1]}
	local tool=${COMP_WORDS[0]}

	COMPREPLY=()
	case $cur in
	-*)
		COMPREPLY=($(compgen -W "$(_xfskit_options "$tool")" -- "$cur"))
		# "--opt=": no space, the value follows.
		[[ ${#COMPREPLY[@]} -eq 1 && ${COMPREPLY[0]} == *= ]] &&
			compopt -o nospace 2>/dev/null
		return
		;;
	--*=*)
		cur=${cur#*=}
		;;
	esac
	# Options whose value is not a file name: nothing to offer.
	local nofile=
	case $tool in
	*xfskit-repair) nofile="-t -o -m -c" ;;
	*xfskit-db) nofile="-c -p" ;;
	*xfskit-mkfs) nofile="-b -d -i -l -L -m -n -r -s" ;;
	*fsck.xfskit) nofile="-C -t" ;;
	*xfskit-admin) nofile="-L -U -O -c" ;;
	*xfskit-resize) nofile="-D" ;;
	esac
	[[ " $nofile " == *" $prev "* ]] && return
	COMPREPLY=($(compgen -f -- "$cur"))
	compopt -o filenames 2>/dev/null
}

complete -F _xfskit xfskit-repair xfskit-db xfskit-mkfs xfskit-undo \
	xfskit-metadump xfskit-mdrestore xfskit-admin fsck.xfskit xfskit-resize
