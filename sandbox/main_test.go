//go:build linux

package sandbox_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/nwdes/nwdes/sandbox"
)

// TestMain lets the test binary act as the wall's helper (the wall
// re-executes /proc/self/exe with the helper verb, as nwdes does) and as
// the hostile programs and supervisors the tests need.
func TestMain(m *testing.M) {
	if sandbox.IsHelper(os.Args) {
		os.Exit(sandbox.HelperMain())
	}
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "netprobe":
			os.Exit(netprobe(os.Args[2], os.Args[3]))
		case "execfd":
			os.Exit(execFD(os.Args[2], os.Args[3], os.Args[4], os.Args[5:]))
		case "supervise":
			os.Exit(supervise(os.Args[2]))
		case "keyring":
			// add_key(2) into the session keyring.
			_, err := unix.AddKey("user", "nwdes-test", []byte("x"), unix.KEY_SPEC_SESSION_KEYRING)
			fmt.Println("add_key:", err)
			os.Exit(0)
		}
	}
	os.Exit(m.Run())
}

// netprobe tries to reach addr over proto and prints what happened:
// "reached" or the error.
func netprobe(proto, addr string) int {
	var err error
	switch proto {
	case "tcp":
		var c net.Conn
		if c, err = net.DialTimeout("tcp", addr, 2*time.Second); err == nil {
			c.Close()
		}
	case "udp":
		var c net.Conn
		if c, err = net.Dial("udp", addr); err == nil {
			_, err = c.Write([]byte("leak"))
			c.Close()
		}
	case "unix":
		var c net.Conn
		if c, err = net.Dial("unix", addr); err == nil {
			c.Close()
		}
	case "mptcp":
		// socket(AF_INET, SOCK_STREAM, IPPROTO_MPTCP) then connect.
		var fd int
		if fd, err = syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 262); err == nil {
			host, port, _ := net.SplitHostPort(addr)
			var sa syscall.SockaddrInet4
			copy(sa.Addr[:], net.ParseIP(host).To4())
			fmt.Sscan(port, &sa.Port)
			err = syscall.Connect(fd, &sa)
			syscall.Close(fd)
		}
	}
	if err != nil {
		fmt.Println("refused:", err)
		return 1
	}
	fmt.Println("reached")
	return 0
}

// supervise runs line in a wall as nwdes would, printing nothing; the test
// kills this process and looks for what it started.
func supervise(line string) int {
	w := &sandbox.Wall{Path: "/usr/bin:/bin", TempRoot: os.TempDir(), Helper: sandbox.Helper{Path: "/proc/self/exe"}}
	res, err := w.Run(context.Background(), sandbox.Command{Args: sandbox.Shell(line), Deadline: time.Minute})
	if err != nil && !strings.Contains(err.Error(), "context") {
		fmt.Fprintln(os.Stderr, err)
	}
	os.Stdout.Write(res.Stdout.Tail)
	return 0
}
