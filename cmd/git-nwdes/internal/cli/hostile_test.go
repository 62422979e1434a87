package cli

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nwdes/nwdes/examine"
	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/gitstore/gitrepo"
	"github.com/nwdes/nwdes/internal/gittest"
)

// A hostile repository is a healthy one (an accepted examination of f, a
// note) damaged in one way anyone with push access could. Every verb runs
// against each: none may crash, fsck must name the damage, readers must
// not call the commit accepted, and a writer that refuses changes nothing.

type hostileRun struct {
	code           int
	stdout, stderr string
}

func runIn(t *testing.T, dir string, stdin string, args ...string) hostileRun {
	t.Helper()
	home := filepath.Join(filepath.Dir(dir), "home")
	env := map[string]string{"HOME": home, "PATH": os.Getenv("PATH"), "TMPDIR": t.TempDir(), "GIT_CONFIG_NOSYSTEM": "1", "NO_COLOR": "1"}
	var out, errb bytes.Buffer
	code := Main(context.Background(), append([]string{"git-nwdes"}, args...), Env{
		Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb, Dir: dir,
		Getenv: func(k string) string { return env[k] },
	})
	return hostileRun{code, out.String(), errb.String()}
}

// healthy builds the base repository: two features, both accepted, whose
// drafts are kept.
func healthy(t *testing.T) string {
	t.Helper()
	dir := gittest.Init(t, false)
	os.MkdirAll(filepath.Join(filepath.Dir(dir), "home"), 0o755)
	gittest.WriteFile(t, dir, ".nwave/features/f.md", "# REQUEST\nr\n# ACCEPTANCE CRITERIA\nE1. one\n")
	gittest.WriteFile(t, dir, ".nwave/features/g.md", "# REQUEST\nr\n# ACCEPTANCE CRITERIA\nE1. one\n")
	gittest.Git(t, dir, "add", "-A")
	gittest.Git(t, dir, "commit", "-q", "-m", "candidate")
	for _, args := range [][]string{
		{"examine", "open", "--feature", "f"},
		{"examine", "observation", "add", "--feature", "f", "--text", "seen"},
		{"examine", "verdict", "set", "--feature", "f", "--expectation", "E1", "--verdict", "met", "--observation", "O1"},
		{"examine", "close", "--feature", "f", "--outcome", "accepted", "--diagnostic", "d"},
		{"examine", "open", "--feature", "g"},
		{"examine", "observation", "add", "--feature", "g", "--text", "seen"},
		{"examine", "verdict", "set", "--feature", "g", "--expectation", "E1", "--verdict", "met", "--observation", "O1"},
		{"examine", "close", "--feature", "g", "--outcome", "accepted", "--diagnostic", "d"},
	} {
		if r := runIn(t, dir, "", args...); r.code != 0 {
			t.Fatalf("%v: exit %d: %s", args, r.code, r.stderr)
		}
	}
	if r := runIn(t, dir, "", "fsck"); r.code != 0 {
		t.Fatalf("the healthy repository is not: %s", r.stdout)
	}
	if r := runIn(t, dir, "", "status"); r.code != 0 {
		t.Fatalf("the healthy repository is not accepted: %s", r.stdout)
	}
	return dir
}

func copyRepo(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "repo")
	if out, err := exec.Command("cp", "-a", src, dst).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	os.MkdirAll(filepath.Join(filepath.Dir(dst), "home"), 0o755)
	return dst
}

func openStore(t *testing.T, dir string) *gitstore.Store {
	t.Helper()
	loc, err := gitrepo.Discover(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The damage is made with a store that checks nothing.
	st, err := gitstore.Open(loc, gitstore.Options{Registry: gitstore.MustRegistry(examine.Register)})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// published returns the path of f's examination.
func published(t *testing.T, st *gitstore.Store) string {
	t.Helper()
	tx, err := st.Records(examine.Ref)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := tx.Get("features/f")
	if err != nil {
		t.Fatal(err)
	}
	var l struct {
		Path string `json:"path"`
	}
	if err := json.Unmarshal(rec.Body, &l); err != nil {
		t.Fatal(err)
	}
	return l.Path
}

func damage(t *testing.T, st *gitstore.Store, fn func(tx gitstore.Edit) error) {
	t.Helper()
	damageRef(t, st, examine.Ref, fn)
}

// forged rewrites the examination records' tip as a fresh clone would
// receive it from a writer who forged it (gittest.RewriteTip): a record
// changed along a history this clone verified is refused HistoryRewritten
// before it is read, and these cases are about the record itself.
func forged(t *testing.T, st *gitstore.Store, edit func(files map[string][]byte)) {
	t.Helper()
	gittest.RewriteTip(t, st.Location().CommonDir, string(examine.Ref), string(gitstore.CheckpointRef(examine.Ref)), edit)
}

func damageRef(t *testing.T, st *gitstore.Store, ref gitstore.RefName, fn func(tx gitstore.Edit) error) {
	t.Helper()
	if _, err := st.Change(context.Background(), ref, "damage", fn); err != nil {
		t.Fatal(err)
	}
}

// refsOf reads the refs as files (git itself stops at a damaged
// packed-refs).
func refsOf(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	filepath.WalkDir(filepath.Join(dir, ".git", "refs"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			c, _ := os.ReadFile(p)
			b.WriteString(p + " " + string(c))
		}
		return nil
	})
	c, _ := os.ReadFile(filepath.Join(dir, ".git", "packed-refs"))
	return b.String() + string(c)
}

// replaceEntry returns tree with the entry at path set to entry ("<mode>
// <type> <id>"), each tree above it made by git mktree, which does not
// read the entry's own object.
func replaceEntry(t *testing.T, dir, tree, path, entry string) string {
	t.Helper()
	name, rest, deeper := strings.Cut(path, "/")
	var lines []string
	for _, l := range strings.Split(gittest.Git(t, dir, "ls-tree", tree), "\n") {
		if f := strings.SplitN(l, "\t", 2); len(f) == 2 && f[1] == name {
			if deeper {
				entry = "040000 tree " + replaceEntry(t, dir, strings.Fields(f[0])[2], rest, entry)
			}
			continue
		}
		if l != "" {
			lines = append(lines, l)
		}
	}
	lines = append(lines, entry+"\t"+name)
	cmd := exec.Command("git", "mktree")
	cmd.Dir, cmd.Env, cmd.Stdin = dir, gittest.Env(filepath.Dir(dir)), strings.NewReader(strings.Join(lines, "\n")+"\n")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git mktree: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// moveTo commits tree on top of ref with git and moves ref there.
func moveTo(t *testing.T, dir, ref, tree string) {
	t.Helper()
	c := gittest.Git(t, dir, "commit-tree", tree, "-p", ref, "-m", "damage")
	gittest.Git(t, dir, "update-ref", ref, c)
}

func hexBytes(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestEveryVerbSurvivesEveryDamagedRepositoryAndFsckNamesTheDamage(t *testing.T) {
	base := healthy(t)
	variants := []struct {
		name   string
		damage func(t *testing.T, dir string)
		fsck   string // what fsck must say
		// acceptanceIntact: the damage leaves the records that decide the
		// commit's acceptance whole (a note, a draft, an index, a stray
		// record that is not the newest): status and the hook may still
		// accept it; fsck names the damage.
		acceptanceIntact bool
	}{
		{"the examine ref points at a product commit", func(t *testing.T, dir string) {
			gittest.Git(t, dir, "update-ref", "refs/nwdes/examine", "HEAD")
		}, "is not a tree of nwdes records", false},
		{"packed-refs holds a malformed id for the examine ref", func(t *testing.T, dir string) {
			gittest.Git(t, dir, "pack-refs", "--all")
			p := filepath.Join(dir, ".git", "packed-refs")
			b, _ := os.ReadFile(p)
			lines := strings.Split(string(b), "\n")
			for i, l := range lines {
				if strings.HasSuffix(l, " refs/nwdes/examine") {
					lines[i] = "zzzz refs/nwdes/examine"
				}
			}
			os.WriteFile(p, []byte(strings.Join(lines, "\n")), 0o644)
		}, "packed-refs has a malformed line for refs/nwdes/examine", false},
		{"packed-refs holds two lines for the examine ref", func(t *testing.T, dir string) {
			gittest.Git(t, dir, "pack-refs", "--all")
			p := filepath.Join(dir, ".git", "packed-refs")
			b, _ := os.ReadFile(p)
			var out []string
			for _, l := range strings.Split(string(b), "\n") {
				out = append(out, l)
				if strings.HasSuffix(l, " refs/nwdes/examine") {
					// git rev-parse reads the second line: an older tip
					// with no examination of the candidate.
					out = append(out, gittest.Git(t, dir, "rev-parse", "refs/nwdes/examine~1")+" refs/nwdes/examine")
				}
			}
			os.WriteFile(p, []byte(strings.Join(out, "\n")), 0o644)
		}, "packed-refs holds 2 lines for it", false},
		{"a payload of the examination is a symbolic link", func(t *testing.T, dir string) {
			st := openStore(t, dir)
			p := published(t, st)
			blob := gittest.Git(t, dir, "rev-parse", "refs/nwdes/examine:"+p+"/payload/t1")
			tree := replaceEntry(t, dir, gittest.Git(t, dir, "rev-parse", "refs/nwdes/examine^{tree}"), p+"/payload/t1", "120000 blob "+blob)
			moveTo(t, dir, "refs/nwdes/examine", tree)
		}, "mode 120000 (a symbolic link)", false},
		{"the examination's payload tree is not sorted", func(t *testing.T, dir string) {
			st := openStore(t, dir)
			p := published(t, st)
			blob := gittest.Git(t, dir, "rev-parse", "refs/nwdes/examine:"+p+"/payload/t1")
			raw := "100644 t2\x00" + string(hexBytes(t, blob)) + "100644 t1\x00" + string(hexBytes(t, blob))
			cmd := exec.Command("git", "hash-object", "-t", "tree", "--literally", "-w", "--stdin")
			cmd.Dir, cmd.Env, cmd.Stdin = dir, gittest.Env(filepath.Dir(dir)), strings.NewReader(raw)
			bad, err := cmd.Output()
			if err != nil {
				t.Fatal(err)
			}
			tree := replaceEntry(t, dir, gittest.Git(t, dir, "rev-parse", "refs/nwdes/examine^{tree}"), p+"/payload", "040000 tree "+strings.TrimSpace(string(bad)))
			moveTo(t, dir, "refs/nwdes/examine", tree)
		}, "treeNotSorted", false},
		{"the brief holds a terminal escape", func(t *testing.T, dir string) {
			note := gittest.Git(t, dir, "notes", "--ref", "nwdes", "show", "HEAD")
			f := filepath.Join(t.TempDir(), "note")
			os.WriteFile(f, []byte(note+"\n\x1b]0;accepted by the CTO\x07\n"), 0o644)
			gittest.Git(t, dir, "notes", "--ref", "nwdes", "add", "-f", "-F", f, "HEAD")
		}, "is not safe to print", true},
		{"a plain file where a record belongs", func(t *testing.T, dir string) {
			damage(t, openStore(t, dir), func(tx gitstore.Edit) error {
				if err := tx.Remove("features/f"); err != nil {
					return err
				}
				return tx.WriteBlob("features/f", []byte("not a record"))
			})
		}, "a file that is not part of a record", true},
		{"the index names a missing examination", func(t *testing.T, dir string) {
			st := openStore(t, dir)
			p := published(t, st)
			forged(t, st, func(files map[string][]byte) {
				for f := range files {
					if strings.HasPrefix(f, p+"/") {
						delete(files, f)
					}
				}
			})
		}, "which cannot be read", false},
		{"an examination renamed to sort newest", func(t *testing.T, dir string) {
			st := openStore(t, dir)
			p := published(t, st)
			damage(t, st, func(tx gitstore.Edit) error {
				rec, err := tx.Get(p)
				if err != nil {
					return err
				}
				return tx.Put(p[:strings.LastIndexByte(p, '/')+1]+"zzzz", rec)
			})
		}, `name is "zzzz"`, false},
		{"an examination carrying a payload nothing reads", func(t *testing.T, dir string) {
			st := openStore(t, dir)
			p := published(t, st)
			forged(t, st, func(files map[string][]byte) { files[p+"/payload/tx"] = []byte("smuggled") })
		}, "payloads other than its", false},
		{"an examination with a short contract_blob", func(t *testing.T, dir string) {
			st := openStore(t, dir)
			p := published(t, st)
			forged(t, st, func(files map[string][]byte) {
				gittest.EditBody(t, files, p+"/record.json", func(b map[string]any) { b["contract_blob"] = "ab" })
			})
		}, "is not an object id", false},
		{"an examination filed under another feature", func(t *testing.T, dir string) {
			st := openStore(t, dir)
			p := published(t, st)
			damage(t, st, func(tx gitstore.Edit) error {
				rec, err := tx.Get(p)
				if err != nil {
					return err
				}
				return tx.Put(strings.Replace(p, "/f/", "/g/", 1), rec)
			})
		}, "belongs under", true},
		{"a draft whose next_id would reissue an observation", func(t *testing.T, dir string) {
			damageRef(t, openStore(t, dir), examine.DraftsRef, func(tx gitstore.Edit) error {
				rec, err := tx.Get("drafts/g")
				if err != nil {
					return err
				}
				rec.Body = bytes.Replace(rec.Body, []byte(`"next_id":2`), []byte(`"next_id":1`), 1)
				return tx.Put("drafts/g", rec)
			})
		}, "next_id 1 is not above issued observation O1", true},
		{"a forged note on a commit no examination judged", func(t *testing.T, dir string) {
			root := gittest.Git(t, dir, "rev-list", "--max-parents=0", "HEAD")
			gittest.Git(t, dir, "notes", "--ref", "nwdes", "add", "-m", "## nwdes acceptance brief: f: accepted", root)
		}, "which no examination judged", true},
		{"the brief edited by hand", func(t *testing.T, dir string) {
			gittest.Git(t, dir, "notes", "--ref", "nwdes", "append", "-m", "reviewed and approved by the CTO", "HEAD")
		}, "is not what its examinations render", true},
	}
	head := gittest.Git(t, base, "rev-parse", "HEAD")
	zero := strings.Repeat("0", 40)
	readers := [][]string{
		{"status"}, {"status", "--json"}, {"examine", "show", "--feature", "f"}, {"examine", "show", "--feature", "g", "--json"},
		{"export", "--commit", "HEAD", "--format", "markdown"}, {"export", "--commit", "HEAD", "--format", "junit"},
		{"export", "--commit", "HEAD", "--format", "intoto"}, {"gate", "status", "--feature", "f"},
		{"verify", "--feature", "f", "--diff", "HEAD~1...HEAD"},
		{"swarm", "status", "--json"}, {"swarm", "leases"}, {"ledger", "show", "--ledger", "x"}, {"trace", "list", "--store", "x"},
	}
	writers := [][]string{
		{"examine", "close", "--feature", "g", "--outcome", "accepted", "--diagnostic", "d"},
		{"examine", "observation", "add", "--feature", "g", "--text", "more"},
		{"examine", "open", "--feature", "f", "--from-current"},
		{"examine", "prompt", "--feature", "f"},
	}
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			dir := copyRepo(t, base)
			v.damage(t, dir)
			crashed := func(args []string, r hostileRun) {
				for _, s := range []string{r.stdout, r.stderr} {
					if strings.Contains(s, "goroutine ") || strings.Contains(s, "panic:") || strings.Contains(s, "runtime error") {
						t.Fatalf("%v crashed:\n%s", args, s)
					}
				}
			}
			fsck := runIn(t, dir, "", "fsck")
			crashed([]string{"fsck"}, fsck)
			if fsck.code == 0 || !strings.Contains(fsck.stdout+fsck.stderr, v.fsck) {
				t.Fatalf("fsck exit %d did not name %q:\n%s%s", fsck.code, v.fsck, fsck.stdout, fsck.stderr)
			}
			for _, args := range readers {
				r := runIn(t, dir, "", args...)
				crashed(args, r)
				if args[0] == "status" && r.code == 0 && !v.acceptanceIntact {
					t.Fatalf("status calls a damaged repository accepted:\n%s", r.stdout)
				}
			}
			hook := runIn(t, dir, "refs/heads/main "+head+" refs/heads/main "+zero+"\n", "hook", "pre-push", "origin", "/nowhere")
			crashed([]string{"hook"}, hook)
			if hook.code == 0 && !v.acceptanceIntact {
				t.Fatalf("the hook lets a damaged repository push:\n%s", hook.stderr)
			}
			for _, args := range writers {
				before := refsOf(t, dir)
				r := runIn(t, dir, "", args...)
				crashed(args, r)
				if r.code != 0 && refsOf(t, dir) != before {
					t.Fatalf("%v refused (exit %d: %s) but changed refs", args, r.code, r.stderr)
				}
			}
		})
	}
}
