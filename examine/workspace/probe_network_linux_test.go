package workspace_test

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nwdes/nwdes/examine/workspace"
)

// connectScript connects to 127.0.0.1 on the port it is given and prints
// what the listener answers.
const connectScript = "#!/bin/bash\nexec 3<>/dev/tcp/127.0.0.1/$1 || exit 7\nread -r line <&3\necho \"connected: $line\"\n"

// listen accepts connections on 127.0.0.1, answering each with a line,
// and counts them.
func listen(t *testing.T) (port string, accepted func() int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Skipf("no loopback listener: %v", err)
	}
	t.Cleanup(func() { ln.Close() })
	var n atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			c.Write([]byte("hello from the host\n"))
			c.Close()
		}
	}()
	_, port, _ = net.SplitHostPort(ln.Addr().String())
	var ours int64
	return port, func() int64 {
		// A connection that got through is in the backlog by the time the
		// probe has ended: one more connection of our own, accepted after
		// it, orders the count.
		ours++
		c, err := net.DialTimeout("tcp", ln.Addr().String(), 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		c.Read(make([]byte, 64))
		c.Close()
		return n.Load() - ours
	}
}

func TestAProbeHasNoNetworkUnlessTheExaminerAsksAndThenItSaysSo(t *testing.T) {
	if _, err := os.Stat("/bin/bash"); err != nil {
		t.Skip("no bash for /dev/tcp")
	}
	checkout, st := candidate(t, nil)
	writeExec(t, filepath.Join(checkout, "bin/greet"), connectScript, 0o755)
	b := prompt(t, st)
	port, accepted := listen(t)

	denied := probe(t, &workspace.Prober{Store: st, Wall: wall(t)}, b.Workspace, "greet", port)
	if denied.err != nil {
		t.Fatal(denied.err)
	}
	t.Logf("without the network: end %s exit %d, stderr %q", denied.pr.Result.End, denied.pr.Result.ExitCode, denied.stderr)
	if denied.pr.Result.ExitCode == 0 || strings.Contains(denied.stdout, "connected") {
		t.Errorf("a probe without the network connected to the host: exit %d, %q %q", denied.pr.Result.ExitCode, denied.stdout, denied.stderr)
	}
	if n := accepted(); n != 0 {
		t.Errorf("the host's listener saw %d connections from a probe without the network", n)
	}
	if denied.pr.Network != workspace.NetworkDenied || strings.Join(denied.pr.Result.Enforced.Network, " ") == "open" || len(denied.pr.Result.Enforced.Network) == 0 {
		t.Errorf("a probe without the network says network %q, enforced %v", denied.pr.Network, denied.pr.Result.Enforced.Network)
	}

	open := probe(t, &workspace.Prober{Store: st, Wall: wall(t), Network: true}, b.Workspace, "greet", port)
	if open.err != nil {
		t.Fatal(open.err)
	}
	if open.pr.Result.ExitCode != 0 || open.stdout != "connected: hello from the host\n" {
		t.Errorf("a probe given the network did not connect: exit %d, %q %q", open.pr.Result.ExitCode, open.stdout, open.stderr)
	}
	if n := accepted(); n != 1 {
		t.Errorf("the host's listener saw %d connections from a probe given the network, want 1", n)
	}
	if open.pr.Network != workspace.NetworkOpen || strings.Join(open.pr.Result.Enforced.Network, " ") != "open" {
		t.Errorf("a probe given the network says network %q, enforced %v", open.pr.Network, open.pr.Result.Enforced.Network)
	}
}
