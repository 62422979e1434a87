package trust

import (
	"bytes"
	"fmt"
	"strings"

	"golang.org/x/crypto/ssh"
)

// AddLine appends to an allowed-signers policy (empty when there is none
// yet) the line that gives the feature pattern to key, with the key's
// comment. added is false, and policy is returned as it is, when a line
// already gives exactly that pattern to that key. A pattern the policy
// format rules out is refused as ParsePolicy refuses it.
func AddLine(policy []byte, features string, key ssh.PublicKey, comment string) (out []byte, added bool, err error) {
	line := fmt.Sprintf("%s %s", features, strings.TrimSpace(string(ssh.MarshalAuthorizedKey(key))))
	if comment != "" {
		line += " " + comment
	}
	if _, err := ParsePolicy("--feature/--key", []byte(line)); err != nil {
		return nil, false, err
	}
	for _, l := range strings.Split(string(policy), "\n") {
		if gives(l, features, key) {
			return policy, false, nil
		}
	}
	out = append([]byte(nil), policy...)
	if len(out) > 0 && !bytes.HasSuffix(out, []byte("\n")) {
		out = append(out, '\n')
	}
	return append(out, line+"\n"...), true, nil
}

// RemoveLines removes from an allowed-signers policy every line that gives
// exactly the feature pattern to key (whatever options it carries), and
// says how many it removed. The other lines are kept byte for byte.
func RemoveLines(policy []byte, features string, key ssh.PublicKey) ([]byte, int) {
	var kept []string
	removed := 0
	for _, l := range strings.SplitAfter(string(policy), "\n") {
		if gives(l, features, key) {
			removed++
			continue
		}
		kept = append(kept, l)
	}
	return []byte(strings.Join(kept, "")), removed
}

// gives reports whether a policy line gives exactly the feature pattern to
// key (whatever options it carries): what AddLine refuses twice and
// RemoveLines removes.
func gives(line, features string, key ssh.PublicKey) bool {
	f := strings.Fields(line)
	if len(f) < 3 || f[0] != features {
		return false
	}
	want := strings.Fields(string(ssh.MarshalAuthorizedKey(key)))
	for i := 1; i+1 < len(f); i++ {
		if f[i] == want[0] && f[i+1] == want[1] {
			return true
		}
	}
	return false
}
