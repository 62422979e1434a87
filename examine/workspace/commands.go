package workspace

import (
	"sort"

	"github.com/nwdes/nwdes/examine"
	"github.com/nwdes/nwdes/gitstore"
)

// Admission is what a candidate lets an examiner run, decided from its
// committed declarations (Admitted).
type Admission struct {
	// Mode is Declared or Python; zero when nothing is declared, and then
	// None is the refusal every probe meets.
	Mode Mode
	None error
	// Declaration is the parsed .nwave/examine.json (Declared).
	Declaration *Declaration
	// Scripts are pyproject.toml's console scripts and Roots the import
	// roots of its wheel (Python).
	Scripts map[string]string
	Roots   []string
}

// Names are the admitted commands, sorted.
func (a *Admission) Names() []string {
	var out []string
	switch a.Mode {
	case Declared:
		out = a.Declaration.Names()
	case Python:
		for n := range a.Scripts {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// Commands reads the candidate's committed declarations (the blobs the
// projection names, never the work tree) and decides what is admitted. A
// declaration that does not parse, or two that name different commands,
// are refused; no declaration at all is not refused here (the candidate's
// prose can still be read) but recorded in None for the probe.
func Commands(st gitstore.CommitReader, p *examine.Projection) (*Admission, error) {
	a := &Admission{}
	if !p.Commands.IsZero() {
		b, err := st.ReadBlob(p.Commands)
		if err != nil {
			return nil, err
		}
		if a.Declaration, err = ParseDeclaration(b); err != nil {
			return nil, err
		}
	}
	if !p.Pyproject.IsZero() {
		b, err := st.ReadBlob(p.Pyproject)
		if err != nil {
			return nil, err
		}
		if a.Scripts, err = ParseProjectScripts(b); err != nil {
			return nil, err
		}
		a.Roots = ImportRoots(b)
	}
	mode, err := Admitted(a.Declaration, a.Scripts)
	if err != nil {
		if a.Declaration == nil && len(a.Scripts) == 0 {
			a.None = err
			return a, nil
		}
		return nil, err
	}
	a.Mode = mode
	return a, nil
}
