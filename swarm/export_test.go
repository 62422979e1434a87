package swarm

// FailMachineWrites makes the files s's machinery writes in a job
// directory once the job has ended (exit.json, usage.tsv, timeline.tsv;
// not what sealing writes in its repository) fail with what f returns for
// the file's name (nil: written as usual). Set it before Run: f is then
// called from every job's goroutine, at once where s runs several.
func FailMachineWrites(s *Supervisor, f func(name string) error) { s.machineFault = f }
