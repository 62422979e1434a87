package sandbox

import (
	"fmt"
	"strings"
)

// Enforced is what the kernel actually enforced for one run, as the helper
// inside the wall applied it (never what was merely asked for).
type Enforced struct {
	// Filesystem is "landlock" or "none"; ABI is the Landlock ABI level the
	// ruleset was built for (0 when none).
	Filesystem string `json:"filesystem"`
	ABI        int    `json:"landlock_abi"`
	// Write and Read are the write and read sets as granted (the read set
	// includes the wall's roots).
	Write []string `json:"write"`
	Read  []string `json:"read"`
	// View is set when the job runs in a filesystem view of its own (a
	// mount namespace holding only its read and write sets, a few device
	// files and its own /proc), read-only outside the write set.
	View bool `json:"view"`
	// Network is "open" when the network was not denied, else the
	// mechanisms that held, in the order applied: "netns" (an empty network
	// namespace), "seccomp" (socket() only for AF_UNIX, no io_uring),
	// "landlock-tcp" (bind and connect on TCP).
	Network []string `json:"network"`
	// Processes: "pid-namespace" (the job sees only its own processes, in a
	// private /proc, and ends with its init) or "subreaper" (orphans come
	// back to the helper, which kills them).
	Processes string `json:"processes"`
	// Signals is true when Landlock scoping keeps the job from signalling
	// any process outside the wall.
	Signals bool `json:"signals_scoped"`
	// Seccomp is set when the system-call filter is installed (keyrings,
	// new user namespaces, io_uring and foreign ABIs refused; sockets too
	// when the network is denied).
	Seccomp bool `json:"seccomp"`
	// NoNewPrivs and Capabilities (the bounding, ambient and inheritable
	// sets read back empty, SECBIT_NOROOT locked) are set on the job.
	NoNewPrivs   bool `json:"no_new_privs"`
	Capabilities bool `json:"capabilities_dropped"`
	// Limits are the resource limits set.
	Limits Limits `json:"limits"`
	// PidsCgroup is set when a pids cgroup caps the job's task count at
	// Limits.Processes (and lists its processes for the survivors count).
	PidsCgroup bool `json:"pids_cgroup"`
	// Caches are the wall's shared caches as the job saw them: each
	// copy-on-write (CacheOverlay: the job writes a copy of its own,
	// dropped with the job) or read-only (CacheReadOnly: no overlay
	// could be made, or the job has no view of its own). A job never
	// writes the host's cache itself.
	Caches []CacheView `json:"caches,omitempty"`
	// Launch is "descriptor" when the program was started through
	// Command.Exec's descriptor, with read and execute granted on that one
	// file; empty when it was started by its path.
	Launch string `json:"launch,omitempty"`
	// Missing lists what was asked for and not enforced; a strict run
	// never starts with anything here.
	Missing []string `json:"missing,omitempty"`
}

// CacheView is one shared cache as a job saw it.
type CacheView struct {
	Path string    `json:"path"`
	Mode CacheMode `json:"mode"`
	// Why says, for a read-only cache, why it is not copy-on-write.
	Why string `json:"why,omitempty"`
}

// CacheMode is how a job sees a shared cache.
type CacheMode string

const (
	// CacheOverlay: an overlay whose lower layer is the host's cache,
	// read-only, and whose upper layer is the job's own, removed with
	// the job.
	CacheOverlay CacheMode = "overlay"
	// CacheReadOnly: the host's cache, bound read-only.
	CacheReadOnly CacheMode = "read-only"
)

// Summary is one line for a reader: what held.
func (e Enforced) Summary() string {
	var parts []string
	if e.Filesystem == "landlock" {
		parts = append(parts, fmt.Sprintf("landlock ABI %d", e.ABI))
		if e.View {
			parts[len(parts)-1] += " in a read-only view"
		}
	} else {
		parts = append(parts, "filesystem open")
	}
	if len(e.Network) == 1 && e.Network[0] == "open" {
		parts = append(parts, "network open")
	} else if len(e.Network) > 0 {
		parts = append(parts, "network denied by "+strings.Join(e.Network, "+"))
	}
	if e.Processes != "" {
		parts = append(parts, e.Processes)
	}
	if e.Launch == "descriptor" {
		parts = append(parts, "started through its descriptor")
	}
	if len(e.Missing) > 0 {
		parts = append(parts, "NOT ENFORCED: "+strings.Join(e.Missing, "; "))
	}
	return strings.Join(parts, ", ")
}

// Limits are the resource limits set on a job (setrlimit). Zero fields
// take the defaults; Unlimited lifts one.
type Limits struct {
	// CPUSeconds bounds the CPU time of each process.
	CPUSeconds uint64 `json:"cpu_seconds"`
	// AddressSpace bounds each process's virtual memory, in bytes. Go
	// programs reserve much more than they use: below about 1 GiB they
	// crash at start.
	AddressSpace uint64 `json:"address_space"`
	// OpenFiles bounds open descriptors per process.
	OpenFiles uint64 `json:"open_files"`
	// FileSize bounds the size of any file a process writes, in bytes.
	FileSize uint64 `json:"file_size"`
	// Processes bounds the processes of the job's user. The kernel ignores
	// it for root outside a user namespace; Enforced says so.
	Processes uint64 `json:"processes"`
	// ProcessesIgnored is set in Enforced when the kernel does not apply
	// Processes (a root job outside a user namespace).
	ProcessesIgnored bool `json:"processes_ignored,omitempty"`
}

// Unlimited lifts one limit.
const Unlimited = ^uint64(0)

// DefaultLimits let go build, go test and python3 run.
var defaultLimits = Limits{
	CPUSeconds:   3600,
	AddressSpace: 32 << 30,
	OpenFiles:    4096,
	FileSize:     8 << 30,
	Processes:    4096,
}

// DefaultLimits returns the limits a zero Limits stands for.
func DefaultLimits() Limits { return defaultLimits }

func (l Limits) withDefaults() Limits {
	d := defaultLimits
	l.CPUSeconds = orDefault(l.CPUSeconds, d.CPUSeconds)
	l.AddressSpace = orDefault(l.AddressSpace, d.AddressSpace)
	l.OpenFiles = orDefault(l.OpenFiles, d.OpenFiles)
	l.FileSize = orDefault(l.FileSize, d.FileSize)
	l.Processes = orDefault(l.Processes, d.Processes)
	return l
}
