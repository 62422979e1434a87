package swarm

import (
	"errors"
	"os"
	"slices"

	"golang.org/x/sys/unix"
)

// machineFiles are the files the supervisor writes in a job directory
// after the job has ended, whatever the card (the last is what sealing
// writes again in repo/.git: config, made bare; the alternates are
// written again only when the job changed them, so none waits for them):
// a spare holds each made empty, beside (never inside) the job directory
// it becomes.
var machineFiles = append(slices.Clip(afterJob), "config")

// machine is where a job's premade machine files wait: beside its spare,
// outside every job's write set, named <spare>.<name> (prefix is the
// spare's path; "" when there are none, and
// each file is then made where it goes. Making a file is what costs on a
// slow disk (spare.go); filling one that is there and renaming it costs a
// few tens of microseconds, so the files are made while an earlier job
// runs and only filled and renamed once this one has ended.
type machine struct {
	prefix string
	// fault, when set, is asked before each write (not before sealing's
	// replaceIn) and fails it with what it returns: how tests make a
	// write fail that a supervisor running as root would otherwise always
	// manage (Supervisor.machineFault).
	fault func(name string) error
}

// premade is where m's premade file name waits ("" when there is none).
func (m machine) premade(name string) string {
	if m.prefix == "" {
		return ""
	}
	return m.prefix + "." + name
}

// write writes body to name in the job directory dir, as a file only the
// machinery writes (read-only), replacing — never writing through —
// whatever the job left at that name: that is removed first, and the new
// file is renamed or created only where nothing is.
func (m machine) write(dir, name string, body []byte) error {
	if m.fault != nil {
		if err := m.fault(name); err != nil {
			return err
		}
	}
	r, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer r.Close()
	return m.writeIn(r, name, body, 0o444)
}

// fill writes body into the premade file at path, with mode once written.
func fill(path string, body []byte, mode os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC|unix.O_NOFOLLOW, 0)
	if err != nil {
		return err
	}
	_, err = f.Write(body)
	if err == nil {
		err = f.Chmod(mode)
	}
	return errors.Join(err, f.Close())
}

// drop removes what is left of the premade files.
func (m machine) drop() {
	for _, name := range machineFiles {
		if premade := m.premade(name); premade != "" {
			_ = os.Remove(premade)
		}
	}
}

// writeMachineFile writes a file only the machinery writes, replacing
// (never writing through) whatever the job left at its name.
func writeMachineFile(dir, name, body string) error {
	return machine{}.write(dir, name, []byte(body))
}
