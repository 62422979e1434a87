package remote

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/gitstore/git"
	"github.com/nwdes/nwdes/gitstore/oid"
	"github.com/nwdes/nwdes/gitstore/treemerge"
	"github.com/nwdes/nwdes/internal/text"
	"github.com/nwdes/nwdes/refusal"
)

// This file moves nwdes refs and notes between clones. Transport goes
// through the git binary, so that users' SSH configuration, credential
// helpers, proxies and URL rewrites apply; it is the only place nwdes runs
// git. Nothing else here trusts git: merges of record trees are computed in
// process and local refs move only by compare-and-swap.
//
// Remote state lands in a tracking namespace, never on the local refs:
//
//	refs/nwdes/<name>   on the remote  →  refs/nwdes-remotes/<remote>/nwdes/<name>
//	refs/notes/nwdes    on the remote  →  refs/nwdes-remotes/<remote>/notes/nwdes
//
// and is then merged into the local refs: a fast-forward when local is
// behind, nothing when it is ahead, otherwise a merge commit whose tree is
// the three-way union of both sides (see mergeTrees).

// Replicator moves a store's refs between clones, each by its declared
// policy: it is the git store's gitstore.Replicator. It embeds the store,
// so that one value plays every role of a clone (records, notes,
// replication), as the conformance suite takes it.
type Replicator struct {
	*gitstore.Store
}

var _ gitstore.Replicator = (*Replicator)(nil)

// New returns the replicator of st.
func New(st *gitstore.Store) *Replicator { return &Replicator{Store: st} }

// run runs git on the store's repository (git.Repo.Run).
func (s *Replicator) run(ctx context.Context, o gitstore.SyncOptions, args ...string) ([]byte, error) {
	return s.Git().Run(ctx, o.Run(), args...)
}

// RemoteSetup is what SetupRemote found and changed.
type RemoteSetup struct {
	Remote   string   `json:"remote"`
	Added    []string `json:"added"`
	Present  []string `json:"present"`
	Warnings []string `json:"warnings"`
}

// FetchRefspecs are the refspecs that bring a remote's nwdes refs and notes
// into the tracking namespace. The notes refspec is a pattern so that a
// remote without nwdes notes yet does not make `git fetch` fail (an exact
// refspec for a missing ref does); it may also bring other notes refs whose
// names start with "nwdes", which only ever land in the tracking namespace.
// notes are the display notes refs declared besides (refs/notes/commits,
// say): each is fetched by the same pattern trick, refs/notes/<name>*, so
// that a remote without it does not fail the fetch.
func FetchRefspecs(remote string, notes ...gitstore.RefName) []string {
	base := gitstore.TrackingPrefix + remote + "/"
	out := []string{
		"+refs/nwdes/*:" + base + "nwdes/*",
		"+refs/notes/nwdes*:" + base + "notes/nwdes*",
	}
	for _, n := range notes {
		rest := strings.TrimPrefix(string(n), "refs/")
		out = append(out, "+"+string(n)+"*:"+base+rest+"*")
	}
	return out
}

// localOf maps a tracking ref back to the local ref it tracks, or "".
func localOf(remote string, tracking gitstore.RefName) gitstore.RefName {
	rest, ok := strings.CutPrefix(string(tracking), gitstore.TrackingPrefix+remote+"/")
	if !ok {
		return ""
	}
	switch {
	case strings.HasPrefix(rest, "nwdes/"):
		return gitstore.RefName("refs/" + rest)
	case rest == "notes/nwdes":
		return gitstore.NotesRef
	case strings.HasPrefix(rest, "notes/"):
		return gitstore.RefName("refs/" + rest) // a display notes ref; callers check it is declared
	}
	return ""
}

// ValidRemoteName refuses names git could not use as a remote.
func ValidRemoteName(remote string) error {
	if remote == "" || strings.HasPrefix(remote, "-") || gitstore.RefName(gitstore.TrackingPrefix+remote+"/x").Validate() != nil {
		return refusal.New(refusal.MissingFact, "name a remote listed by git remote",
			"%q is not a remote name", remote)
	}
	return nil
}

func (s *Replicator) checkRemote(ctx context.Context, remote string, o gitstore.SyncOptions) error {
	if err := ValidRemoteName(remote); err != nil {
		return err
	}
	urls, err := s.GitConfig(ctx, "remote."+remote+".url", o)
	if err != nil {
		return err
	}
	if len(urls) == 0 {
		return refusal.New(refusal.MissingFact, "add it with git remote add "+remote+" URL, or name a remote listed by git remote -v",
			"there is no remote named %q", remote)
	}
	return nil
}

// SetupRemote adds FetchRefspecs to remote.<remote>.fetch (each once), so
// that a plain `git fetch` brings nwdes refs and notes into the tracking
// namespace. It never writes remote.<remote>.push: a bare `git push` would
// then push only what that lists. It warns about fetch refspecs already
// configured that would force the remote's values onto local nwdes refs or
// notes, which drops local records not yet pushed.
func (s *Replicator) SetupRemote(ctx context.Context, remote string, o gitstore.SyncOptions) (*RemoteSetup, error) {
	o.Fill()
	if err := s.checkRemote(ctx, remote, o); err != nil {
		return nil, err
	}
	// Asked of git, not of the configuration the store read at its
	// start (GitConfig): this writes the same key, and a second setup
	// through one store must see the first one's specs.
	have, err := s.Git().Config(ctx, "remote."+remote+".fetch", o.Run())
	if err != nil {
		return nil, err
	}
	res := &RemoteSetup{Remote: remote, Added: []string{}, Present: []string{}, Warnings: []string{}}
	for _, spec := range have {
		if clobbersLocal(spec) {
			res.Warnings = append(res.Warnings, fmt.Sprintf(
				"remote.%s.fetch %q overwrites local nwdes refs or notes on every fetch, dropping records not yet pushed; remove it with: git config --unset remote.%s.fetch '%s'",
				remote, spec, remote, regexpQuote(spec)))
		}
	}
	for _, spec := range FetchRefspecs(remote, s.Registry().NotesRefs()...) {
		if slices.Contains(have, spec) {
			res.Present = append(res.Present, spec)
			continue
		}
		if _, err := s.run(ctx, o, "config", "--add", "remote."+remote+".fetch", spec); err != nil {
			return nil, err
		}
		res.Added = append(res.Added, spec)
	}
	return res, nil
}

func regexpQuote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `.`, `\.`, `*`, `\*`, `+`, `\+`, `^`, `\^`, `$`, `\$`, `[`, `\[`, `]`, `\]`, `?`, `\?`, `(`, `\(`, `)`, `\)`, `|`, `\|`, `{`, `\{`, `}`, `\}`)
	return r.Replace(s)
}

// clobbersLocal reports whether a fetch refspec writes onto refs/nwdes/ or
// refs/notes/nwdes (negative refspecs write nothing).
func clobbersLocal(spec string) bool {
	spec = strings.TrimPrefix(spec, "+")
	if strings.HasPrefix(spec, "^") {
		return false
	}
	_, dst, ok := strings.Cut(spec, ":")
	if !ok || dst == "" {
		return false
	}
	covers := func(target string) bool {
		if i := strings.IndexByte(dst, '*'); i >= 0 {
			prefix := dst[:i]
			return strings.HasPrefix(target, prefix) || strings.HasPrefix(prefix, target)
		}
		return dst == target || strings.HasPrefix(dst, target+"/")
	}
	return covers("refs/nwdes/") || covers("refs/notes/nwdes")
}

// Fetch brings the remote's nwdes refs and notes into the tracking
// namespace and merges each into the local ref (see MergeInto). Local refs
// the remote lacks are left alone.
func (s *Replicator) Fetch(ctx context.Context, remote string, o gitstore.SyncOptions) (*gitstore.SyncReport, error) {
	o.Fill()
	if err := s.checkRemote(ctx, remote, o); err != nil {
		return nil, err
	}
	merged, err := s.fetchAndMerge(ctx, remote, o)
	if err != nil {
		return nil, err
	}
	return &gitstore.SyncReport{Remote: remote, Merged: merged, Pushed: []gitstore.RefSync{}, Attempts: 1}, nil
}

func (s *Replicator) fetchAndMerge(ctx context.Context, remote string, o gitstore.SyncOptions) ([]gitstore.RefSync, error) {
	args := append([]string{"fetch", "--quiet", "--no-tags", "--prune", "--no-write-fetch-head",
		"--no-recurse-submodules", remote}, FetchRefspecs(remote, s.Registry().NotesRefs()...)...)
	if _, err := s.fetchGit(ctx, remote, o, args...); err != nil {
		return nil, err
	}
	if err := s.fetchMissing(ctx, remote, o); err != nil {
		return nil, err
	}
	merged, err := s.MergeTracking(ctx, remote, o)
	if err != nil {
		return nil, err
	}
	if o.AfterMerge != nil {
		if err := o.AfterMerge(ctx); err != nil {
			return nil, fmt.Errorf("after merging %s: %w", remote, err)
		}
	}
	return merged, nil
}

// fetchGit runs a git fetch of remote. A fetch that failed only because
// another process of this clone moved one of its tracking refs meanwhile
// (git's "cannot lock ref 'refs/nwdes-remotes/…'": a local lock race, not
// the network) is run again a few times, then refused LockHeld.
func (s *Replicator) fetchGit(ctx context.Context, remote string, o gitstore.SyncOptions, args ...string) ([]byte, error) {
	wait := 20 * time.Millisecond
	for attempt := 1; ; attempt++ {
		out, err := s.run(ctx, o, args...)
		if err == nil || !localLockRace(err) || ctx.Err() != nil {
			return out, git.TransportRefusal("fetch", remote, err)
		}
		if attempt >= o.MaxAttempts {
			var ge *git.GitError
			errors.As(err, &ge)
			return nil, refusal.New(refusal.LockHeld,
				"run the command again once the other fetch of this clone ends; a lock file that stays (a crashed git's) is removed by hand, as git's message says",
				"git fetch %s could not lock a tracking ref of this clone, %d times (another git or nwdes fetch of this clone held or moved it, or a crashed git left its lock; not the network): %s",
				remote, attempt, text.OneLine(ge.Stderr)).Wrap(errors.Join(gitstore.ErrLocked, err))
		}
		s.Options().Sleep(git.Jitter(wait))
		wait *= 2
	}
}

// localLockRace reports a git fetch that failed because one of this
// clone's tracking refs was locked or moved by another process while the
// fetch updated it (and for no other reason: the transport failing is
// fatal to git).
func localLockRace(err error) bool {
	var ge *git.GitError
	return errors.As(err, &ge) && strings.Contains(ge.Stderr, "cannot lock ref '"+gitstore.TrackingPrefix) &&
		!strings.Contains(ge.Stderr, "fatal:")
}

// MergeTracking brings every tracking ref of remote into its local ref,
// each by its declared policy, without any transport: what an ordinary
// `git fetch` brought (after SetupRemote) becomes visible to nwdes. A
// merge ref is merged (MergeInto), a fast-forward ref fast-forwarded, a
// swap ref mirrored (and deleted when the remote no longer has it); a ref
// no kind declares is reported skipped and left alone. A fast-forward ref
// already diverged refuses the call with ChainDiverged before any ref
// moves; one that diverges while the call runs refuses at that ref, after
// the refs before it (each ref moves whole, on its own).
func (s *Replicator) MergeTracking(ctx context.Context, remote string, o gitstore.SyncOptions) ([]gitstore.RefSync, error) {
	o.Fill()
	if err := ValidRemoteName(remote); err != nil {
		return nil, err
	}
	tracked, err := s.Refs().List(gitstore.TrackingPrefix + remote + "/")
	if err != nil {
		return nil, err
	}
	type job struct {
		local, tracking gitstore.RefName
		spec            gitstore.RefSpec
		declared        bool
	}
	var jobs []job
	for _, t := range gitstore.SortedNames(tracked) {
		local := localOf(remote, t)
		if local == "" {
			continue
		}
		spec, ok := s.Registry().Ref(local)
		j := job{local: local, tracking: t, spec: spec, declared: ok}
		if ok && spec.Policy == gitstore.PolicyFastForward {
			// Refuse before anything moves: a diverged chain is never merged.
			if err := s.checkForward(local, tracked[t]); err != nil {
				return nil, err
			}
		}
		jobs = append(jobs, j)
	}
	out := []gitstore.RefSync{}
	for _, j := range jobs {
		theirs := tracked[j.tracking]
		var rs gitstore.RefSync
		var err error
		switch {
		case !j.declared:
			cur, rerr := s.Refs().Read(j.local)
			if rerr != nil {
				return nil, rerr
			}
			rs = gitstore.RefSync{Ref: j.local, Action: gitstore.SyncSkipped, Before: gitstore.HexOrEmpty(cur), After: gitstore.HexOrEmpty(cur), Remote: gitstore.HexOrEmpty(theirs)}
		case j.spec.Policy == gitstore.PolicyMerge, j.spec.Policy == gitstore.PolicyFastForward:
			rs, err = s.Integrate(ctx, j.local, j.spec.Policy, theirs, remote, s.merge)
		case j.spec.Policy == gitstore.PolicySwap:
			rs, err = s.mirror(j.local, theirs)
		default:
			// A local ref is never under refs/nwdes/ (DeclareRef refuses
			// it), so no tracking ref maps to one.
			err = fmt.Errorf("%s is declared %s but was fetched", j.local, j.spec.Policy)
		}
		if err != nil {
			return nil, err
		}
		rs.Policy = j.spec.Policy
		out = append(out, rs)
	}
	// A swap ref the remote no longer has (a released lease: fetch
	// --prune removed its tracking ref) is deleted here too.
	locals, err := s.Refs().List("refs/nwdes/")
	if err != nil {
		return nil, err
	}
	for _, ref := range gitstore.SortedNames(locals) {
		spec, ok := s.Registry().Ref(ref)
		if !ok || spec.Policy != gitstore.PolicySwap {
			continue
		}
		if _, seen := tracked[gitstore.TrackingRef(remote, ref)]; seen {
			continue
		}
		rs, err := s.mirror(ref, oid.Zero)
		if err != nil {
			return nil, err
		}
		rs.Policy = spec.Policy
		out = append(out, rs)
	}
	return out, nil
}

// checkForward refuses when ref and theirs have diverged: each holds
// commits the other lacks.
func (s *Replicator) checkForward(ref gitstore.RefName, theirs oid.ID) error {
	ours, err := s.Refs().Read(ref)
	if err != nil || ours.IsZero() || theirs.IsZero() || ours == theirs {
		return err
	}
	behind, err := s.IsAncestor(ours, theirs)
	if err != nil || behind {
		return err
	}
	ahead, err := s.IsAncestor(theirs, ours)
	if err != nil || ahead {
		return err
	}
	return gitstore.Diverged(ref, ours, theirs)
}

// mirror sets a swap ref to the remote's value (zero: the remote has no
// such ref, and the local one is deleted): the remote is where such a ref
// is decided, and the local ref is only what was last seen there.
func (s *Replicator) mirror(ref gitstore.RefName, theirs oid.ID) (gitstore.RefSync, error) {
	for attempt := 1; ; attempt++ {
		ours, err := s.Refs().Read(ref)
		if err != nil {
			return gitstore.RefSync{}, err
		}
		rs := gitstore.RefSync{Ref: ref, Action: gitstore.SyncUpToDate, Before: gitstore.HexOrEmpty(ours), After: gitstore.HexOrEmpty(ours), Remote: gitstore.HexOrEmpty(theirs)}
		if ours == theirs {
			return rs, nil
		}
		err = s.Git().MoveRef(ref, ours, theirs)
		if err == nil {
			rs.Action, rs.After = gitstore.SyncMirrored, gitstore.HexOrEmpty(theirs)
			return rs, nil
		}
		if !errors.Is(err, gitstore.ErrConflict) || attempt >= s.Options().MaxAttempts {
			return gitstore.RefSync{}, err
		}
		s.Options().Sleep(git.Jitter(time.Millisecond))
	}
}

// MergeInto merges commit theirs into the local ref: it creates the ref when
// absent, fast-forwards it when it is an ancestor of theirs, leaves it when
// theirs is already contained, and otherwise writes a merge commit (parents:
// local tip, theirs) whose tree is the three-way merge of both over their
// merge base. The ref moves by compare-and-swap; when another writer moved
// it meanwhile, the merge is recomputed (bounded by the store's
// MaxAttempts).
func (s *Replicator) MergeInto(ctx context.Context, ref gitstore.RefName, theirs oid.ID, from string, o gitstore.SyncOptions) (gitstore.RefSync, error) {
	o.Fill()
	if err := ref.Validate(); err != nil {
		return gitstore.RefSync{}, err
	}
	spec, err := s.Registry().RefFor(ref)
	if err != nil {
		return gitstore.RefSync{}, err
	}
	if spec.Policy != gitstore.PolicyMerge {
		return gitstore.RefSync{}, refusal.New(refusal.PolicyRefused, "bring it in with git nwdes fetch, which follows its policy",
			"%s is declared %s: it is never merged", ref, spec.Policy)
	}
	return s.Integrate(ctx, ref, spec.Policy, theirs, from, s.merge)
}

// Push sends every local nwdes ref and the notes ref to remote without ever
// overwriting a remote update it has not seen: each round fetches and
// merges (so local contains the remote's value), then runs one atomic
// `git push --no-verify` whose every ref carries --force-with-lease with the
// remote value just fetched. When the remote moved in between, the lease
// fails, nothing is written, and the round repeats (bounded by MaxAttempts,
// with jittered backoff). --no-verify keeps the user's pre-push hooks out of
// nwdes's own pushes.
func (s *Replicator) Push(ctx context.Context, remote string, o gitstore.SyncOptions) (*gitstore.SyncReport, error) {
	o.Fill()
	if err := s.checkRemote(ctx, remote, o); err != nil {
		return nil, err
	}
	wait := 20 * time.Millisecond
	var lastErr error
	for attempt := 1; attempt <= o.MaxAttempts; attempt++ {
		merged, err := s.fetchAndMerge(ctx, remote, o)
		if err != nil {
			return nil, err
		}
		rep := &gitstore.SyncReport{Remote: remote, Merged: merged, Pushed: []gitstore.RefSync{}, Attempts: attempt}
		locals, err := s.Refs().List("refs/nwdes/")
		if err != nil {
			return nil, err
		}
		for _, n := range append([]gitstore.RefName{gitstore.NotesRef}, s.Registry().NotesRefs()...) {
			if h, err := s.Refs().Read(n); err != nil {
				return nil, err
			} else if !h.IsZero() {
				locals[n] = h
			}
		}
		args := []string{"push", "--no-verify", "--atomic", "--porcelain", "--no-recurse-submodules"}
		var specs []string
		moved := false
		for _, ref := range gitstore.SortedNames(locals) {
			if spec, ok := s.Registry().Ref(ref); !ok || spec.Policy == gitstore.PolicySwap || spec.Policy == gitstore.PolicyLocal {
				// Undeclared refs are not ours to send; swap refs move
				// only by SwapRemote, one ref and one expected value.
				continue
			}
			tracked, err := s.Refs().Read(gitstore.TrackingRef(remote, ref))
			if err != nil {
				return nil, err
			}
			if tracked == locals[ref] {
				continue
			}
			// The lease must be a remote value the local ref contains. A
			// plain git fetch between our merge and here moves the tracking
			// ref to a value we never merged; leasing on it would force the
			// push over that update. Merge again instead.
			if !tracked.IsZero() {
				merged, err := s.IsAncestor(tracked, locals[ref])
				if err != nil {
					return nil, err
				}
				if !merged {
					moved = true
					break
				}
			}
			args = append(args, "--force-with-lease="+string(ref)+":"+gitstore.HexOrEmpty(tracked))
			specs = append(specs, locals[ref].String()+":"+string(ref))
			rep.Pushed = append(rep.Pushed, gitstore.RefSync{Ref: ref, Action: gitstore.SyncPushed, Before: gitstore.HexOrEmpty(tracked), After: locals[ref].String(), Remote: gitstore.HexOrEmpty(tracked)})
		}
		if moved {
			lastErr = fmt.Errorf("a tracking ref of %s moved during the merge", remote)
			continue
		}
		if len(specs) == 0 {
			return rep, nil
		}
		args = append(append(args, remote), specs...)
		out, err := s.run(ctx, o, args...)
		if err == nil {
			for _, p := range rep.Pushed {
				// What the remote now holds; a failure here only delays
				// the next fetch's knowledge of it.
				t := gitstore.TrackingRef(remote, p.Ref)
				cur, err := s.Refs().Read(t)
				if after, perr := oid.Parse(p.After); err == nil && perr == nil {
					_ = s.Refs().CompareAndSwap(t, cur, after)
				}
			}
			return rep, nil
		}
		if !pushRaced(out) {
			return nil, git.TransportRefusal("push", remote, err)
		}
		lastErr = err
		s.Options().Sleep(git.Jitter(wait))
		if wait < 500*time.Millisecond {
			wait *= 2
		}
	}
	return nil, refusal.New(refusal.Conflict, "the remote keeps moving, or its refs cannot be updated; run git nwdes push again",
		"%s kept rejecting the push of nwdes refs: gave up after %d attempts (last: %v)", remote, o.MaxAttempts, text.OneLine(fmt.Sprint(lastErr))).Wrap(lastErr)
}

// pushRaced reports whether git's porcelain output shows a push rejected
// only because the remote moved (a failed lease, a non-fast-forward, the
// remote's ref update losing to a concurrent push, or the rest of an atomic
// push failing with it), which another round repairs.
func pushRaced(porcelain []byte) bool {
	raced := false
	for _, line := range strings.Split(string(porcelain), "\n") {
		f := strings.SplitN(line, "\t", 3)
		if len(f) < 3 || f[0] != "!" {
			continue
		}
		switch {
		case strings.Contains(f[2], "(stale info)"), strings.Contains(f[2], "(fetch first)"),
			strings.Contains(f[2], "(non-fast-forward)"), strings.Contains(f[2], "(atomic push failed)"),
			strings.Contains(f[2], "(already exists)"),
			// The remote's own ref update lost a race with another push
			// (its lock, or the old value under it).
			strings.Contains(f[2], "(atomic transaction failed)"), strings.Contains(f[2], "(failed to update ref)"),
			strings.Contains(f[2], "(cannot lock ref"):
			raced = true
		default:
			return false
		}
	}
	return raced
}

// merge is the store's Merge: the trees by treemerge's policy, records by
// their kinds' rules (the registry's).
func (s *Replicator) merge(ref gitstore.RefName, ours, theirs, base oid.ID, message string) (oid.ID, []string, error) {
	m := &merger{s: s.Store, ref: ref, resolve: s.Registry().Resolve}
	next, err := m.commit(ours, theirs, base, message)
	return next, m.resolved, err
}

// merger merges one ref's commits: the trees by treemerge's policy, with
// the store's objects and its record rule.
type merger struct {
	s        *gitstore.Store
	ref      gitstore.RefName
	resolve  gitstore.Resolver
	resolved []string
}

func (m *merger) commit(ours, theirs, base oid.ID, message string) (oid.ID, error) {
	treeOf := func(h oid.ID) (oid.ID, error) {
		if h.IsZero() {
			return oid.Zero, nil
		}
		c, err := m.s.Git().ReadCommit(h)
		if err != nil {
			return oid.Zero, err
		}
		return c.Tree, nil
	}
	bt, err := treeOf(base)
	if err != nil {
		return oid.Zero, err
	}
	ot, err := treeOf(ours)
	if err != nil {
		return oid.Zero, err
	}
	tt, err := treeOf(theirs)
	if err != nil {
		return oid.Zero, err
	}
	// Records are decided whole, by their kind's rule; notes both sides
	// changed keep both texts.
	notes := m.s.Registry().IsNotes(m.ref)
	rules := treemerge.Rules{Notes: notes, Decide: m.record}
	if spec, ok := m.s.Registry().Ref(m.ref); ok && notes {
		rules.NoteMerge = spec.MergeNote
	}
	if !notes {
		rules.Unit = isRecordDir
	}
	tree, resolved, err := treemerge.Merge(mergeObjects{s: m.s}, bt, ot, tt, rules)
	if err != nil {
		return oid.Zero, err
	}
	m.resolved = resolved
	if tree.IsZero() {
		if tree, err = m.s.Git().Write(git.TreeObject, nil); err != nil {
			return oid.Zero, err
		}
	}
	c, err := git.EncodeCommit(tree, []oid.ID{ours, theirs}, gitstore.Identity, m.s.Options().Now(), message)
	if err != nil {
		return oid.Zero, err
	}
	return m.s.Git().Write(git.CommitObject, c)
}

// mergeObjects gives treemerge the store's objects: records trees, whose
// entries must have records' modes, or product trees (product), which
// keep every mode git stores (an executable, a link, a submodule).
type mergeObjects struct {
	s       *gitstore.Store
	product bool
}

func (x mergeObjects) Tree(h oid.ID) (map[string]treemerge.Entry, error) {
	es, err := x.s.Git().ReadTree(h)
	if err != nil {
		return nil, err
	}
	out := make(map[string]treemerge.Entry, len(es))
	for _, e := range es {
		name := e.Name
		if what := gitstore.RecordModeProblem(e.Mode); what != "" && !x.product {
			// A merge would carry it into a tree every reader refuses.
			return nil, refusal.NewUnreadable(refusal.RefUnreadable, "restore the ref from a good clone, then fetch again",
				"tree %s holds %q with %s", h.String()[:12], name, what)
		}
		out[name] = treemerge.Entry{Mode: e.Mode, Hash: e.ID}
	}
	return out, nil
}

func (x mergeObjects) WriteTree(entries map[string]treemerge.Entry) (oid.ID, error) {
	es := make([]git.TreeEntry, 0, len(entries))
	for name, e := range entries {
		es = append(es, git.TreeEntry{Name: name, Mode: e.Mode, ID: e.Hash})
	}
	b, err := git.EncodeTree(es)
	if err != nil {
		return oid.Zero, err
	}
	return x.s.Git().Write(git.TreeObject, b)
}

func (x mergeObjects) Blob(h oid.ID) ([]byte, error) {
	_, b, err := x.s.Git().Read(h)
	return b, err
}

func (x mergeObjects) WriteBlob(data []byte) (oid.ID, error) {
	return x.s.Git().Write(git.BlobObject, data)
}

// isRecordDir reports a record directory: one holding record.json.
func isRecordDir(es map[string]treemerge.Entry) bool {
	e, ok := es["record.json"]
	return ok && !e.IsTree()
}

// record decides a record directory both sides changed, by its kind's
// merge rule (the registry's); an unreadable record cannot be judged by
// kind, and the byte rule decides the same way on both clones.
func (m *merger) record(path string, ours, theirs oid.ID, o, t map[string]treemerge.Entry) (oid.ID, error) {
	rawO, ro, errO := m.readRecord(o)
	rawT, rt, errT := m.readRecord(t)
	if errO != nil || errT != nil {
		c := bytes.Compare(rawO, rawT)
		if c == 0 {
			c = oid.Compare(ours, theirs)
		}
		if c < 0 {
			return theirs, nil
		}
		return ours, nil
	}
	side, err := m.resolve(m.ref, path, ro, rt)
	if err != nil {
		return oid.Zero, fmt.Errorf("merge %s in %s: %w", path, m.ref, err)
	}
	if side == gitstore.Theirs {
		return theirs, nil
	}
	return ours, nil
}

// readRecord reads a record directory (record.json and payload/), returning
// record.json's bytes even when the record does not decode.
func (m *merger) readRecord(es map[string]treemerge.Entry) ([]byte, *gitstore.Record, error) {
	_, raw, err := m.s.Git().Read(es["record.json"].Hash)
	if err != nil {
		return nil, nil, err
	}
	r, err := gitstore.DecodeRecord(raw)
	if err != nil {
		return raw, nil, err
	}
	if p, ok := es["payload"]; ok && p.IsTree() {
		pes, err := mergeObjects{s: m.s}.Tree(p.Hash)
		if err != nil {
			return raw, nil, err
		}
		r.Payloads = map[string][]byte{}
		for name, e := range pes {
			_, data, err := m.s.Git().Read(e.Hash)
			if err != nil {
				return raw, nil, err
			}
			r.Payloads[name] = data
		}
	}
	return raw, r, nil
}

// fetchMissing brings, in a partial clone, every object the fetched nwdes
// refs reach and the filter left out (records are blobs, and a clone made
// with --filter=blob:none fetches none of them, one made with
// --filter=tree:0 not even their trees): asked for all at once, in rounds
// (fetchMissingOf), as git asks its promisor remote for objects it lacks.
// Records are then read whole, never taken for absent. A full clone has
// nothing missing and pays one rev-list.
func (s *Replicator) fetchMissing(ctx context.Context, remote string, o gitstore.SyncOptions) error {
	tracked, err := s.Refs().List(gitstore.TrackingPrefix + remote + "/")
	if err != nil || len(tracked) == 0 {
		return err
	}
	var tips []oid.ID
	for _, name := range gitstore.SortedNames(tracked) {
		if spec, ok := s.Registry().Ref(localOf(remote, name)); ok && spec.Commit {
			// A commit ref's history is a product's: git fetches what
			// a checkout of it lacks, and listing it all here would
			// walk the whole history at every fetch.
			continue
		}
		tips = append(tips, tracked[name])
	}
	if len(tips) == 0 {
		return nil
	}
	return s.Git().FetchMissingFrom(ctx, remote, tips, true, o.Run())
}
