package gitstore

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/nwdes/nwdes/gitstore/git"

	"github.com/nwdes/nwdes/gitstore/oid"
	"github.com/nwdes/nwdes/internal/text"
)

// Problem is one thing fsck found wrong.
type Problem struct {
	Ref    RefName `json:"ref"`
	Commit string  `json:"commit,omitempty"`
	Path   string  `json:"path,omitempty"`
	What   string  `json:"problem"`
}

func (p Problem) String() string {
	s := string(p.Ref)
	if p.Commit != "" {
		s += "@" + p.Commit[:12]
	}
	if p.Path != "" {
		s += ":" + p.Path
	}
	return s + ": " + p.What
}

// FsckReport is what Fsck checked and found.
type FsckReport struct {
	Refs     int       `json:"refs"`
	Commits  int       `json:"commits"`
	Records  int       `json:"records"`
	Notes    int       `json:"notes"`
	Problems []Problem `json:"problems"`
}

// OK reports whether nothing was wrong.
func (r *FsckReport) OK() bool { return len(r.Problems) == 0 }

// Fsck re-reads every ref under refs/nwdes/ and the notes ref: every commit
// of each first-parent chain (bounded by MaxWalk) and every tree and blob
// they reach must be present and well-formed, every record.json canonical
// JSON of a known kind and version, every note a blob named for a commit id.
// Objects shared between commits are checked once.
// Every append-only ref's whole history is checked as VerifyHistory
// checks it (each commit that drops or changes a record is named), and
// every checkpoint its ref no longer contains.
func (s *Store) Fsck() (*FsckReport, error) {
	refs := map[RefName]oid.ID{}
	rep := &FsckReport{Problems: []Problem{}}
	// A ref packed-refs names twice is named and, unless a loose file
	// (which git reads first) gives its value, not read further: it has
	// no one value to check.
	damaged := map[RefName]bool{}
	gather := func(prefix string, only RefName) error {
		sc, err := s.refs.Scan(prefix)
		if err != nil {
			return err
		}
		for _, name := range SortedNames(sc.Refs) {
			h := sc.Refs[name]
			if only != "" && name != only || strings.HasPrefix(string(name), CheckpointPrefix) {
				continue // a checkpoint is checked against its ref (fsckHistory)
			}
			if n := sc.PackedTwice[name]; n > 0 {
				rep.Problems = append(rep.Problems, Problem{Ref: name, What: fmt.Sprintf("packed-refs holds %d lines for it (git reads one or another of them); keep one", n)})
				if !sc.Loose[name] {
					damaged[name] = true
					continue
				}
			}
			refs[name] = h
		}
		return nil
	}
	for _, prefix := range []string{"refs/nwdes/", LocalPrefix} {
		if err := gather(prefix, ""); err != nil {
			return nil, err
		}
	}
	for _, n := range append([]RefName{NotesRef}, s.opts.Registry.NotesRefs()...) {
		if err := gather(string(n), n); err != nil {
			return nil, err
		}
	}
	rep.Refs = len(damaged)
	seen := fsckSeen{}
	for _, name := range SortedNames(refs) {
		rep.Refs++
		s.fsckRef(rep, name, refs[name], seen)
	}
	s.fsckHistory(rep, refs)
	return rep, nil
}

func (s *Store) fsckRef(rep *FsckReport, ref RefName, tip oid.ID, seen fsckSeen) {
	spec, err := s.opts.Registry.refFor(ref)
	if err != nil {
		// Its records are still checked below, as records of no known
		// ref: nothing would sync it, and nothing may write to it.
		rep.Problems = append(rep.Problems, Problem{Ref: ref, Commit: tip.String(), What: text.OneLine(err.Error())})
	}
	if spec.Commit {
		s.fsckCommitRef(rep, ref, tip)
		return
	}
	h := tip
	for n := 0; !h.IsZero(); n++ {
		if n >= s.opts.MaxWalk {
			rep.Problems = append(rep.Problems, Problem{Ref: ref, What: fmt.Sprintf("history longer than the walk limit of %d commits; not checked further", s.opts.MaxWalk)})
			return
		}
		rep.Commits++
		c, err := s.git.ReadCommit(h)
		if err != nil {
			rep.Problems = append(rep.Problems, Problem{Ref: ref, Commit: h.String(), What: "commit unreadable: " + err.Error()})
			return
		}
		if len(c.Parents) > 1 {
			// Merges come from nwdes's own sync; every parent must be there.
			for _, p := range c.Parents[1:] {
				if _, err := s.git.ReadCommit(p); err != nil {
					rep.Problems = append(rep.Problems, Problem{Ref: ref, Commit: h.String(), What: "merge parent unreadable: " + err.Error()})
				}
			}
		}
		commit := h
		// The trees this commit's walk reads serve its checks' view too,
		// and are dropped with the commit.
		trees := treeCache{}
		at := &fsckCommit{trees: trees, view: sync.OnceValues(func() (*Tx, error) { return s.viewWith(ref, commit, true, trees) })}
		if spec.Layout != nil {
			if _, err := at.view(); err != nil {
				rep.Problems = append(rep.Problems, Problem{Ref: ref, Commit: h.String(), What: err.Error()})
			}
		}
		if h == tip && spec.CheckNote != nil {
			at.checkNote = spec.CheckNote(s)
		}
		if k := (fsckKey{ref: ref, id: c.Tree, tree: true}); !seen[k] {
			seen[k] = true
			s.fsckTree(rep, spec, ref, h, c.Tree, "", seen, at)
		}
		if len(c.Parents) == 0 {
			return
		}
		h = c.Parents[0]
	}
}

// fsckCommit is what the checks of one commit's records share, so that
// each costs what it reads rather than a fresh view of the whole commit:
// one view of the commit, made at the first check that needs it, and the
// check of notes, bound once to the records it renders from (set at the
// ref's current commit only: notes are checked against the records there).
type fsckCommit struct {
	trees     treeCache
	view      func() (*Tx, error)
	checkNote func(commit oid.ID, note []byte) error
}

// fsckSeen is what one fsck has checked. A tree or a blob is keyed by
// ref, path and id: a record's validity depends on where it is (its name
// carries its time and content id), so the same tree at another path is
// checked again; and by ref too, since a record's check may read its
// neighbours (a ledger entry its predecessor), which another ref holding
// the same tree does not vouch for. What a record carries (its tree) is
// keyed by id alone.
type fsckSeen map[fsckKey]bool

// fsckKey names the path as its directory and its name ("" and "" for a
// commit's tree, "" and the name at the top), so that a key costs no
// string built for it, and whether the entry says tree: one id at one
// path named once as a tree and once as a file is two things to check
// (one of them is damage).
type fsckKey struct {
	ref       RefName
	dir, name string
	id        oid.ID
	tree      bool
	carried   bool
}

// fsckPath is the path of name in dir.
func fsckPath(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

// fsckTree checks one tree of a ref's commit (at dir), which the caller
// has marked seen.
func (s *Store) fsckTree(rep *FsckReport, spec RefSpec, ref RefName, commit, tree oid.ID, dir string, seen fsckSeen, at *fsckCommit) {
	bad := rep.problemAt(ref, commit)
	es, ok := s.fsckReadTree(at.trees, tree, dir, bad)
	if !ok {
		return
	}
	for _, e := range es {
		k := fsckKey{ref: ref, dir: dir, name: e.Name, id: e.ID, tree: e.IsTree()}
		if e.IsTree() {
			if spec.Layout != nil && e.Name == recordTreeDir && hasEntry(es, "record.json") {
				// A tree a record carries holds files of any name: only
				// that every object of it is there and of its type.
				s.fsckCarried(rep, ref, commit, e.ID, fsckPath(dir, e.Name), seen)
				continue
			}
			if spec.Layout != nil && e.Name == "payload" && !hasEntry(es, "record.json") {
				bad(fsckPath(dir, e.Name), "a payload directory with no record.json beside it")
			}
			if !seen[k] {
				seen[k] = true
				s.fsckTree(rep, spec, ref, commit, e.ID, fsckPath(dir, e.Name), seen, at)
			}
			continue
		}
		p := fsckPath(dir, e.Name)
		if what := RecordModeProblem(e.Mode); what != "" {
			bad(p, what)
			continue
		}
		if seen[k] {
			continue
		}
		seen[k] = true
		// A record.json this store has read and decoded already (the
		// check of a note rendered from it) is neither read nor decoded
		// again.
		env, decoded := (*envelope)(nil), false
		if e.Name == "record.json" {
			env, decoded = s.cachedEnvelope(e.ID)
		}
		var blob []byte
		if !decoded {
			bt, b, err := s.git.Read(e.ID)
			if err != nil || bt != git.BlobObject {
				bad(p, fmt.Sprintf("blob %s unreadable: %v", e.ID, err))
				continue
			}
			blob = b
		}
		switch {
		case s.opts.Registry.isNotes(ref):
			rep.Notes++
			id := strings.ReplaceAll(p, "/", "")
			if !git.IsHexID(s.git.Format(), id) {
				bad(p, "notes tree entry is not named for an object id")
			} else if at.checkNote != nil {
				if err := at.checkNote(oid.MustParse(id), blob); err != nil {
					bad(p, err.Error())
				}
			}
		case spec.Layout != nil && e.Name != "record.json" && !strings.HasSuffix("/"+dir, "/payload"):
			bad(p, "a file that is not part of a record (records are <path>/record.json and <path>/payload/<name>)")
		case e.Name == "record.json":
			rep.Records++
			r, err := s.fsckDecode(e.ID, blob, env, decoded)
			if err != nil {
				bad(p, err.Error())
				continue
			}
			kind, known := s.opts.Registry.Kind(r.Kind)
			switch {
			case !known:
				bad(p, fmt.Sprintf("record kind %q is unknown", r.Kind))
			case r.V > kind.Version:
				bad(p, fmt.Sprintf("record %s v%d is newer than this nwdes reads (v%d)", r.Kind, r.V, kind.Version))
			case spec.Kinds != nil && !containsKind(spec.Kinds, r.Kind):
				bad(p, fmt.Sprintf("record kind %q does not belong in %s", r.Kind, ref))
			case kind.Check != nil:
				if err := checkRecord(kind, at, p, r); err != nil {
					bad(p, fmt.Sprintf("%s record: %v", r.Kind, err))
				}
			}
		}
	}
}

// fsckDecode is the record of blob id: the envelope the store decoded
// before, or blob decoded now (and kept).
func (s *Store) fsckDecode(id oid.ID, blob []byte, env *envelope, decoded bool) (*Record, error) {
	if decoded {
		return env.record(), nil
	}
	r, err := decodeRecord(blob)
	if err == nil {
		s.records.put(id, envelopeOf(r))
	}
	return r, err
}

// problemAt returns a function that records a problem at a path of ref's
// commit.
func (rep *FsckReport) problemAt(ref RefName, commit oid.ID) func(path, what string) {
	return func(path, what string) {
		rep.Problems = append(rep.Problems, Problem{Ref: ref, Commit: commit.String(), Path: path, What: what})
	}
}

// fsckReadTree reads (through trees, which may be nil) and decodes a
// tree, naming it at dir when it cannot.
func (s *Store) fsckReadTree(trees treeCache, tree oid.ID, dir string, bad func(path, what string)) ([]git.TreeEntry, bool) {
	es, err := trees.readTree(s, tree)
	if r := (*treeUnreadable)(nil); errors.As(err, &r) {
		bad(dir, fmt.Sprintf("tree %s unreadable: %v", tree, r.err))
		return nil, false
	}
	if err != nil {
		bad(dir, err.Error())
		return nil, false
	}
	return es, true
}

// fsckCarried checks a tree a record carries: every tree and blob in it
// is present and of its type.
func (s *Store) fsckCarried(rep *FsckReport, ref RefName, commit, tree oid.ID, dir string, seen fsckSeen) {
	if seen[fsckKey{carried: true, id: tree}] {
		return
	}
	seen[fsckKey{carried: true, id: tree}] = true
	bad := rep.problemAt(ref, commit)
	es, ok := s.fsckReadTree(nil, tree, dir, bad)
	if !ok {
		return
	}
	for _, e := range es {
		p := dir + "/" + e.Name
		switch {
		case e.IsTree():
			s.fsckCarried(rep, ref, commit, e.ID, p, seen)
		case e.Mode != ModeFile && e.Mode != ModeExec:
			bad(p, fmt.Sprintf("a record's tree holds mode %o: only regular files belong there", e.Mode))
		default:
			if seen[fsckKey{carried: true, id: e.ID}] {
				continue
			}
			seen[fsckKey{carried: true, id: e.ID}] = true
			if bt, _, err := s.git.Read(e.ID); err != nil || bt != git.BlobObject {
				bad(p, fmt.Sprintf("blob %s unreadable: %v", e.ID, err))
			}
		}
	}
}

// checkRecord loads the payloads of a record whose record.json the walk
// has read and decoded (as rec), and runs its kind's Check on it: the
// record.json is not read and decoded a second time.
func checkRecord(kind KindSpec, at *fsckCommit, path string, rec *Record) error {
	tx, err := at.view()
	if err != nil {
		return err
	}
	dir := strings.TrimSuffix(path, "/record.json")
	if err := readRecordRest(tx, dir, rec); err != nil {
		return err
	}
	return kind.Check(tx, dir, rec)
}

func hasEntry(es []git.TreeEntry, name string) bool {
	for _, e := range es {
		if e.Name == name {
			return true
		}
	}
	return false
}

// fsckCommitRef checks a Commit ref: its commit and tree are there and
// read. Its history is a product's, not records: it is not walked.
func (s *Store) fsckCommitRef(rep *FsckReport, ref RefName, tip oid.ID) {
	rep.Commits++
	c, err := s.git.ReadCommit(tip)
	if err != nil {
		rep.Problems = append(rep.Problems, Problem{Ref: ref, Commit: tip.String(), What: "commit unreadable: " + err.Error()})
		return
	}
	if t, _, err := s.git.Read(c.Tree); err != nil || t != git.TreeObject {
		rep.Problems = append(rep.Problems, Problem{Ref: ref, Commit: tip.String(), What: fmt.Sprintf("tree %s unreadable: %v", c.Tree, err)})
	}
}
