package swarm

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// Holder is who holds a lease: a supervisor process on a host.
type Holder struct {
	Owner string `json:"owner"`
	Host  string `json:"host"`
	// Boot is the host's boot id: a pid is only meaningful within one boot.
	Boot string `json:"boot"`
	PID  int    `json:"pid"`
	// NS is the inode of the process's pid namespace: supervisors in
	// containers sharing a kernel (and a boot id, and maybe a host name)
	// do not see each other's pids.
	NS uint64 `json:"ns,omitempty"`
	// Start is the process's start time in clock ticks since boot
	// (/proc/<pid>/stat field 22): with the pid, it names one process, not
	// whichever process reuses the pid later.
	Start uint64 `json:"start"`
}

// Self is the calling process as a holder.
func Self(owner string) (Holder, error) {
	host, err := os.Hostname()
	if err != nil {
		return Holder{}, err
	}
	start, err := processStart(os.Getpid())
	if err != nil {
		return Holder{}, err
	}
	return Holder{Owner: owner, Host: host, Boot: bootID(), NS: pidNamespace(), PID: os.Getpid(), Start: start}, nil
}

// bootID is this boot's id ("" where the kernel has none).
func bootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// processStart reads a process's start time from /proc/<pid>/stat.
func processStart(pid int) (uint64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	// The command name (field 2) is in parentheses and may hold anything:
	// fields are counted after its closing parenthesis.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, errors.New("unreadable /proc stat")
	}
	f := strings.Fields(s[i+1:])
	// f[0] is field 3 (state); start time is field 22.
	if len(f) < 20 {
		return 0, errors.New("short /proc stat")
	}
	return strconv.ParseUint(f[19], 10, 64)
}

// alive reports whether the holder process still runs: same pid, same
// start time. Only meaningful for a holder on this host and boot.
func alive(h Holder) bool {
	if h.PID <= 0 {
		return false
	}
	if err := syscall.Kill(h.PID, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	start, err := processStart(h.PID)
	return err == nil && start == h.Start
}

// pidNamespace is the inode of this process's pid namespace (0 when it
// cannot be read).
func pidNamespace() uint64 {
	var st syscall.Stat_t
	if err := syscall.Stat("/proc/self/ns/pid", &st); err != nil {
		return 0
	}
	return st.Ino
}
