package sandbox

import (
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTick is the unit of /proc/<pid>/stat's times (USER_HZ, 100 on
// every Linux nwdes runs on).
const clockTick = 10 * time.Millisecond

// CPU is the processor time the job's processes have used so far, as the
// kernel counts it: every live descendant of the wall's helper, with the
// time of those already reaped (counted into their parents, the helper
// included); the helper's own time is not the job's. ok is false when it
// cannot be read (the job has not started, or /proc is not there). It
// only grows while the job runs, so a caller telling a busy job from an
// idle one compares two readings.
func (p *Process) CPU() (time.Duration, bool) {
	if p.pid <= 0 {
		return 0, false
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, false
	}
	type stat struct {
		ppid      int
		own, kids int64
	}
	all := map[int]stat{}
	children := map[int][]int{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // ended meanwhile
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 15 {
			continue
		}
		// Fields 4 (ppid) and 14-17 (utime, stime, cutime, cstime).
		ppid, _ := strconv.Atoi(f[1])
		var t [4]int64
		for k := range t {
			t[k], _ = strconv.ParseInt(f[11+k], 10, 64)
		}
		all[pid] = stat{ppid: ppid, own: t[0] + t[1], kids: t[2] + t[3]}
		children[ppid] = append(children[ppid], pid)
	}
	helper, ok := all[p.pid]
	if !ok {
		return 0, false
	}
	ticks := helper.kids
	queue := append([]int(nil), children[p.pid]...)
	seen := map[int]bool{p.pid: true}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		if seen[pid] {
			continue
		}
		seen[pid] = true
		s := all[pid]
		ticks += s.own + s.kids
		queue = append(queue, children[pid]...)
	}
	return time.Duration(ticks) * clockTick, true
}
