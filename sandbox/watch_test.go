package sandbox

import "testing"

func TestTheRefusalDetectorReadsTheToolsWays(t *testing.T) {
	t.Parallel()
	write := []string{"/job"}
	visible := []string{"/job", "/usr", "/etc"}
	cases := []struct {
		line, want string
	}{
		{"/bin/sh: 1: cannot create /etc/x: Permission denied", "/etc/x"},
		{"sh: 1: cannot create f: Permission denied", ""},
		{"touch: cannot touch '/root/x': Permission denied", "/root/x"},
		{"head: cannot open '/root/.bashrc' for reading: Permission denied", "/root/.bashrc"},
		{"mkdir: cannot create directory ‘/etc/new’: Read-only file system", "/etc/new"},
		{"PermissionError: [Errno 13] Permission denied: '/etc/passwd'", "/etc/passwd"},
		{"open /etc/x: read-only file system", "/etc/x"},
		{"/etc/x: Permission denied", "/etc/x"},
		{"cp: cannot create regular file '/job/out/a': Permission denied", ""},
		{"touch: cannot touch 'sub/f': Permission denied", ""},
		{"all tests passed: no permission problems", ""},
		{"cat: /nonexistent-nwdes/x: No such file or directory", ""},
		{"cat: /etc/nonexistent-nwdes: No such file or directory", ""},
		{"ls: cannot access '/tmp/x': No such file or directory", "/tmp/x"},
	}
	for _, c := range cases {
		d := newDetector("/job", write, visible)
		w := d.stream()
		w.Write([]byte("STEP 7\n" + c.line + "\n"))
		got, step := d.result()
		switch {
		case c.want == "" && got != nil:
			t.Errorf("%q: blamed the wall for %q", c.line, got.Path)
		case c.want != "" && (got == nil || got.Path != c.want || got.Step != "7"):
			t.Errorf("%q: refused %+v, want %s at step 7", c.line, got, c.want)
		}
		if step != "7" {
			t.Errorf("%q: step %q", c.line, step)
		}
	}
}
