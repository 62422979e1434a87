//go:build !unix

package workspace

// syscallNoFollow: without O_NOFOLLOW, Read relies on its Lstat walk.
const syscallNoFollow = 0
