// Package sandbox is the wall: the one place nwdes starts a program it did
// not write (a contract's CHECK, a probe, a swarm worker). Everything else
// asks a Wall (or the narrow Runner interface it implements): to run a
// program to its end (Run), or to start it and keep working while the wall
// holds it (Start, Process: Wait, Done, Stop, Signal).
//
// A run has two halves in two processes. The supervisor (Wall, Job) makes
// the job directory, holds the deadline, reads the output (digesting it
// whole, keeping a bounded tail, watching it for the kernel's refusals),
// and reaps. The helper (HelperMain) is this same binary started again
// from /proc/self/exe, because Go cannot run code between fork and exec:
// it becomes the init of a new pid namespace, builds the job's filesystem
// view (view_linux.go), restricts its own thread (capabilities,
// no_new_privs, Landlock via go-landlock, a seccomp filter, limits) and
// forks the program from that thread so that it inherits all of it. A
// status pipe carries what was enforced, or why the program never ran,
// back to the supervisor. Every binary that runs a Wall must call
// HelperMain when IsHelper(os.Args) says so.
//
// A Lane runs jobs in turn through one helper (gate run gives one to each
// oracle it runs at once), which saves a start of this binary per job and
// weakens nothing: each job's program is forked from a thread of the
// helper made for it, which unshares a mount, filesystem and IPC
// namespace, builds that job's view (its own job directory only) and the
// wall on itself alone, and is never given back; the helper, init of the
// lane's pid namespace and pivoted into a root of the wall's roots and
// job directories only, kills and reaps every process of a job before
// the next starts, the supervisor checks from outside (the pids cgroup,
// else the namespace) that only the helper is left, and a job that left
// anything, or that had to be ended, ends the helper with it. A job
// cannot change the helper's limits (the seccomp filter refuses prlimit64
// on another process, and the helper checks them before each job) nor
// signal it (the one thread of the helper in a job's Landlock domain,
// which forked it, ends once it has). A
// job the lane cannot share (other limits needing a second stage, a
// program started through its descriptor, no namespaces, Landlock
// without signal scoping, a path outside the helper's root, a deadline
// whose CPU time the helper's limit could not hold, a view the lane
// could not build, a helper that ended before it took the job) runs with
// a helper of its own.
//
// It imports the standard library, golang.org/x/sys, golang.org/x/net/bpf,
// go-landlock and refusal; it knows nothing of git, contracts or records.
package sandbox
