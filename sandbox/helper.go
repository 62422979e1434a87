package sandbox

// HelperVerb is the hidden first argument that makes nwdes's binary act as
// the wall's helper instead of its command line, and execVerb the one for
// the helper's second stage. Go cannot run code between fork and exec, so
// the supervisor re-executes its own binary (/proc/self/exe): the helper
// becomes the job's init (or subreaper) and starts the second stage, which
// restricts its own thread and then replaces itself with the program. Every
// binary that runs a Wall must call HelperMain when IsHelper says so
// (cmd/git-nwdes does, and so must a TestMain).
// laneVerb starts the helper of a Lane, which runs the jobs it is sent one
// after another.
const (
	HelperVerb = "__nwdes-wall-helper"
	execVerb   = "__nwdes-wall-exec"
	laneVerb   = "__nwdes-wall-lane"
)

// IsHelper reports whether args (os.Args) ask for the helper or its
// second stage.
func IsHelper(args []string) bool {
	return len(args) > 1 && (args[1] == HelperVerb || args[1] == execVerb || args[1] == laneVerb)
}

// helperControl is one request of the supervisor after the spec: Signal,
// a signal to send to every process of the job (Process.Signal). Seq
// names the job of a lane it is for (0 for a helper of one job): a lane's
// helper drops a request for a job that has ended, so that it never
// reaches the next one.
type helperControl struct {
	Signal int `json:"signal,omitempty"`
	Seq    int `json:"seq,omitempty"`
}
