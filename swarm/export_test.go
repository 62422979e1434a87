package swarm

// FailMachineWrites makes the writes s's machinery does in job
// directories (exit.json, usage.tsv, timeline.tsv) fail with what f
// returns for the file's name (nil: written as usual).
func FailMachineWrites(s *Supervisor, f func(name string) error) { s.machineFault = f }
