package sandbox

import (
	"bufio"
	"os"
	"strconv"
	"strings"
)

// MountsUnder lists the mount points beneath dir, from the kernel's
// mountinfo; an unreadable mountinfo is answered with dir itself, so that
// nothing is removed on a guess.
func MountsUnder(dir string) []string {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return []string{dir + " (mountinfo unreadable)"}
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 {
			continue
		}
		if mp := unescapeMount(fields[4]); within(mp, dir) {
			out = append(out, mp)
		}
	}
	if sc.Err() != nil {
		return []string{dir + " (mountinfo unreadable)"}
	}
	return out
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
