package sandbox

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// pidsCgroup is a pids cgroup made for one job: it caps the number of
// tasks (RLIMIT_NPROC does not bind root outside a user namespace, so
// without it a fork bomb inside the wall exhausts the host's pids), and
// it lists every process of the job wherever it reparented, which makes it
// the outside check of the survivors count and the last-resort kill.
type pidsCgroup struct{ dir string }

// newPidsCgroup makes a child of this process's own pids cgroup (so an
// existing limit still applies) with pids.max set. It works on a cgroup v1
// pids hierarchy, and on cgroup v2 where pids is delegated to this
// process's cgroup; elsewhere it returns an error and the job runs
// without one.
func (w *Wall) newPidsCgroup(max uint64) (*pidsCgroup, error) {
	base, err := w.pidsBase(pidsCgroupDir)
	if err != nil {
		return nil, err
	}
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, err
	}
	dir := filepath.Join(base, "nwdes-job-"+hex.EncodeToString(b[:]))
	if err := os.Mkdir(dir, 0o755); err != nil {
		w.forgetPidsBase(base)
		return nil, fmt.Errorf("make pids cgroup: %w", err)
	}
	c := &pidsCgroup{dir: dir}
	v := "max"
	if max != Unlimited {
		v = strconv.FormatUint(max, 10)
	}
	if err := os.WriteFile(filepath.Join(dir, "pids.max"), []byte(v), 0); err != nil {
		c.remove()
		return nil, fmt.Errorf("set pids.max: %w", err)
	}
	return c, nil
}

// pidsBase is where find (pidsCgroupDir) found the pids cgroup, kept
// from the first run that found it: reading the process's cgroup and the
// whole mountinfo again for every job of a gate run found the same
// directory each time. A supervisor moved to another cgroup meanwhile
// still makes its jobs' cgroups under the first, whose limits still bind
// them. An error is not kept: the next run looks again (a cgroup
// delegated later, a mount that was busy), and a base where a job's
// cgroup cannot be made is forgotten (forgetPidsBase).
func (w *Wall) pidsBase(find func() (string, error)) (string, error) {
	w.onceMu.Lock()
	base := w.cgBase
	w.onceMu.Unlock()
	if base != "" {
		return base, nil
	}
	base, err := find()
	if err != nil {
		return "", err
	}
	w.onceMu.Lock()
	defer w.onceMu.Unlock()
	if w.cgBase == "" {
		w.cgBase = base
	}
	return w.cgBase, nil
}

// forgetPidsBase forgets base, if it is still the one kept, so that the
// next run finds the pids cgroup again.
func (w *Wall) forgetPidsBase(base string) {
	w.onceMu.Lock()
	defer w.onceMu.Unlock()
	if w.cgBase == base {
		w.cgBase = ""
	}
}

// pidsCgroupDir finds where this process's pids cgroup is mounted.
func pidsCgroupDir() (string, error) {
	own, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", err
	}
	var v1, v2 string
	hasV1, hasV2 := false, false
	for _, line := range strings.Split(strings.TrimSpace(string(own)), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 {
			continue
		}
		switch {
		case f[0] == "0" && f[1] == "":
			v2, hasV2 = f[2], true
		case containsWord(f[1], "pids"):
			v1, hasV1 = f[2], true
		}
	}
	mi, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", err
	}
	defer mi.Close()
	sc := bufio.NewScanner(mi)
	for sc.Scan() {
		// id parent dev root mountpoint options [optional…] - fstype source superoptions
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok {
			continue
		}
		pf, qf := strings.Fields(pre), strings.Fields(post)
		if len(pf) < 5 || len(qf) < 3 {
			continue
		}
		root, mnt := pf[3], pf[4]
		switch {
		case qf[0] == "cgroup" && hasV1 && containsWord(qf[2], "pids"):
			if rel, ok := strings.CutPrefix(v1, root); ok {
				return filepath.Join(mnt, rel), nil
			}
		case qf[0] == "cgroup2" && hasV2 && !hasV1:
			if rel, ok := strings.CutPrefix(v2, root); ok {
				dir := filepath.Join(mnt, rel)
				ctl, _ := os.ReadFile(filepath.Join(dir, "cgroup.subtree_control"))
				if containsWord(strings.ReplaceAll(string(ctl), " ", ","), "pids") {
					return dir, nil
				}
			}
		}
	}
	return "", errors.New("no pids cgroup this process may make children in")
}

func containsWord(list, w string) bool {
	for _, x := range strings.Split(strings.TrimSpace(list), ",") {
		if x == w {
			return true
		}
	}
	return false
}

// add moves pid into the cgroup.
func (c *pidsCgroup) add(pid int) error {
	return os.WriteFile(filepath.Join(c.dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0)
}

// pids lists the processes in the cgroup.
func (c *pidsCgroup) pids() []int {
	b, err := os.ReadFile(filepath.Join(c.dir, "cgroup.procs"))
	if err != nil {
		return nil
	}
	var out []int
	for _, f := range strings.Fields(string(b)) {
		if n, err := strconv.Atoi(f); err == nil {
			out = append(out, n)
		}
	}
	return out
}

// end kills whatever is left in the cgroup, waits (bounded) for it to
// empty, removes it, and returns how many processes were still in it.
func (c *pidsCgroup) end(wait time.Duration) int {
	deadline := time.Now().Add(wait)
	for {
		left := c.pids()
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			c.remove()
			return len(left)
		}
		for _, p := range left {
			_ = unix.Kill(p, unix.SIGKILL)
		}
		time.Sleep(time.Millisecond)
	}
	c.remove()
	return 0
}

func (c *pidsCgroup) remove() {
	for i := 0; i < 50; i++ {
		if err := unix.Rmdir(c.dir); err == nil || errors.Is(err, unix.ENOENT) {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// readPids lists the processes in the cgroup, or says why it cannot.
func (c *pidsCgroup) readPids() ([]int, error) {
	b, err := os.ReadFile(filepath.Join(c.dir, "cgroup.procs"))
	if err != nil {
		return nil, err
	}
	var out []int
	for _, f := range strings.Fields(string(b)) {
		n, err := strconv.Atoi(f)
		if err != nil {
			return nil, fmt.Errorf("cgroup.procs: %q", f)
		}
		out = append(out, n)
	}
	return out, nil
}
