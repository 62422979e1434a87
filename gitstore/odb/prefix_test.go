package odb

import (
	"bytes"
	"errors"
	"github.com/nwdes/nwdes/gitstore/oid"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// wantPrefix returns the ids in sorted that begin with prefix, by brute force
// over their hexadecimal forms hex (in the same order).
func wantPrefix(sorted []oid.ID, hex []string, prefix string, limit int) []oid.ID {
	prefix = strings.ToLower(prefix)
	var out []oid.ID
	for i, h := range sorted {
		if strings.HasPrefix(hex[i], prefix) {
			out = append(out, h)
		}
	}
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out
}

func hexes(ids []oid.ID) []string {
	out := make([]string, len(ids))
	for i, h := range ids {
		out[i] = h.String()
	}
	return out
}

func sortedIDs(ids []oid.ID) []oid.ID {
	ids = slices.Clone(ids)
	slices.SortFunc(ids, oid.Compare)
	return slices.Compact(ids)
}

// checkPrefixes compares Prefix with a brute-force search over every id git
// lists, for prefixes of several lengths cut from a sample of the ids and
// from ids that are not there.
func checkPrefixes(t *testing.T, repo string, db *DB) {
	t.Helper()
	var ids []oid.ID
	for _, o := range allObjects(t, repo) {
		ids = append(ids, o.id)
	}
	ids = sortedIDs(ids)
	hex := hexes(ids)
	var prefixes []string
	for i := range ids {
		if i%5 != 0 {
			continue
		}
		for _, n := range []int{1, 2, 3, 4, 5, 7, 12, 39, 40} {
			prefixes = append(prefixes, hex[i][:n])
		}
		prefixes = append(prefixes, strings.ToUpper(hex[i][:6]))
	}
	prefixes = append(prefixes, "0", "f", "00", "ff", "000", "fff", "0000", "ffff", strings.Repeat("0", 40), strings.Repeat("f", 40))
	multi := 0
	for _, p := range prefixes {
		for _, limit := range []int{0, 1, 2} {
			got, err := db.Prefix(p, limit)
			if err != nil {
				t.Fatalf("Prefix(%q, %d): %v", p, limit, err)
			}
			want := wantPrefix(ids, hex, p, limit)
			if !slices.Equal(got, want) {
				t.Fatalf("Prefix(%q, %d) = %v, want %v", p, limit, got, want)
			}
			if limit == 0 && len(want) > 1 {
				multi++
			}
		}
	}
	if multi == 0 {
		t.Fatal("no prefix matched several objects: the test proves little")
	}
}

func TestPrefixMixedLooseAndPacks(t *testing.T) {
	requireGit(t)
	repo := newHistoryRepo(t, 100)
	git(t, repo, nil, "repack", "-q", "-a", "-d")
	git(t, repo, nil, "reset", "-q", "--hard")
	for i := range 3 {
		os.WriteFile(filepath.Join(repo, "README"), []byte(strings.Repeat("more\n", 100+i)), 0o644)
		git(t, repo, nil, "commit", "-q", "-am", "incremental")
	}
	git(t, repo, nil, "repack", "-q", "-d")
	for i := range 3 {
		os.WriteFile(filepath.Join(repo, "src", "main.go"), []byte(strings.Repeat("loose\n", 10+i)), 0o644)
		git(t, repo, nil, "commit", "-q", "-am", "loose")
	}
	// The same objects loose and packed at once, as between git repack
	// and git prune-packed: each id must be reported once.
	git(t, repo, nil, "repack", "-q", "-a")
	dir := objectsDir(repo)
	if p, l := countPacks(t, dir), countLoose(t, dir); p < 2 || l == 0 {
		t.Fatalf("want at least 2 packs and some loose objects, got %d packs, %d loose", p, l)
	}
	checkPrefixes(t, repo, openDB(t, dir))
}

func TestPrefixAlternates(t *testing.T) {
	requireGit(t)
	src := newHistoryRepo(t, 60)
	git(t, src, nil, "gc", "-q", "--prune=now")
	leaf := filepath.Join(t.TempDir(), "leaf")
	git(t, t.TempDir(), nil, "clone", "-q", "--shared", src, leaf)
	os.WriteFile(filepath.Join(leaf, "README"), []byte("local\n"), 0o644)
	git(t, leaf, nil, "commit", "-q", "-am", "local")
	id := strings.TrimSpace(string(git(t, src, []byte("only in the alternate"), "hash-object", "-w", "--stdin")))
	db := openDB(t, objectsDir(leaf))
	got, err := db.Prefix(id[:10], 0)
	if err != nil || len(got) != 1 || got[0].String() != id {
		t.Fatalf("Prefix(%s) through alternates = %v, %v", id[:10], got, err)
	}
	checkPrefixes(t, leaf, db)
}

// TestIdxPrefixNarrowing puts thousands of names in one fanout bucket, with
// long shared prefixes, so that the search goes through the single-name
// probes and the chunked forward read.
func TestIdxPrefixNarrowing(t *testing.T) {
	var entries []idxEntry
	var ids []oid.ID
	for i := range 5000 {
		h := setByte(hashOf(strings.Repeat("x", i)), 0, 0x42)
		if i%3 == 0 {
			h = setByte(setByte(h, 1, 0x17), 2, 0x71) // a run of ~1700 names sharing 6 digits
		}
		entries = append(entries, idxEntry{h, int64(12 + i)})
		ids = append(ids, h)
	}
	entries = append(entries, idxEntry{rawID(0x41, 0xff), 1}, idxEntry{rawID(0x43), 2})
	ids = sortedIDs(append(ids, rawID(0x41, 0xff), rawID(0x43)))
	hex := hexes(ids)
	raw := buildIdx(entries, [maxHashLen]byte{})
	x, err := parseIdx(bytes.NewReader(raw), int64(len(raw)), oid.SHA1)
	if err != nil {
		t.Fatal(err)
	}
	prefixes := []string{"4", "41", "42", "43", "421", "4217", "421771", "4217710", "42177", "44", "0", "f"}
	for i := range ids {
		if i%37 == 0 {
			prefixes = append(prefixes, hex[i][:9], hex[i], hex[i][:39])
		}
	}
	for _, p := range prefixes {
		ph, n, err := parsePrefix(p, oid.SHA1)
		if err != nil {
			t.Fatal(err)
		}
		for _, limit := range []int{0, 1, 3, 100} {
			got, err := x.prefix(ph, n, limit, nil)
			if err != nil {
				t.Fatalf("prefix(%s, %d): %v", p, limit, err)
			}
			if want := wantPrefix(ids, hex, p, limit); !slices.Equal(got, want) {
				t.Fatalf("prefix(%s, %d) = %d ids, want %d", p, limit, len(got), len(want))
			}
		}
	}
}

func TestPrefixRejectsBadPrefix(t *testing.T) {
	db := openDB(t, t.TempDir())
	for _, p := range []string{"", "g", "12345z", strings.Repeat("a", 41), "12 4"} {
		if got, err := db.Prefix(p, 0); err == nil {
			t.Errorf("Prefix(%q) = %v, want an error", p, got)
		}
	}
	if got, err := db.Prefix("abcd", 0); err != nil || len(got) != 0 {
		t.Errorf("Prefix in an empty directory = %v, %v", got, err)
	}
}

func TestPrefixIgnoresStrayLooseNames(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "ab"), 0o755)
	for _, name := range []string{"tmp_obj_Xyz", strings.Repeat("c", 37), strings.Repeat("C", 38), strings.Repeat("c", 39)} {
		os.WriteFile(filepath.Join(dir, "ab", name), nil, 0o644)
	}
	os.WriteFile(filepath.Join(dir, "ab", strings.Repeat("c", 38)), nil, 0o644)
	got, err := openDB(t, dir).Prefix("abc", 0)
	if err != nil || len(got) != 1 || got[0].String() != "ab"+strings.Repeat("c", 38) {
		t.Fatalf("Prefix(abc) = %v, %v", got, err)
	}
}

func TestPrefixCorruptIdxIsAnError(t *testing.T) {
	requireGit(t)
	repo := filepath.Join(t.TempDir(), "r")
	git(t, t.TempDir(), nil, "init", "-q", repo)
	dir := objectsDir(repo)
	id := strings.TrimSpace(string(git(t, repo, []byte("loose"), "hash-object", "-w", "--stdin")))
	os.MkdirAll(filepath.Join(dir, "pack"), 0o755)
	bad := filepath.Join(dir, "pack", "pack-"+strings.Repeat("1", 40))
	os.WriteFile(bad+".idx", []byte("\xfftOc\x00\x00\x00\x02garbage"), 0o644)
	os.WriteFile(bad+".pack", []byte("PACK"), 0o644)
	_, err := openDB(t, dir).Prefix(id[:8], 0)
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Prefix beside a corrupt index = %v, want ErrCorrupt", err)
	}
}

func TestPrefixFindsPackAddedAfterOpen(t *testing.T) {
	requireGit(t)
	repo := newHistoryRepo(t, 20)
	git(t, repo, nil, "repack", "-q", "-a", "-d")
	git(t, repo, nil, "prune-packed")
	db := openDB(t, objectsDir(repo))
	if _, err := db.Prefix("00", 0); err != nil { // lists the packs
		t.Fatal(err)
	}
	id := strings.TrimSpace(string(git(t, repo, []byte("new"), "hash-object", "-w", "--stdin")))
	git(t, repo, nil, "tag", "new", id) // reachable, so repack packs it
	git(t, repo, nil, "repack", "-q", "-a", "-d")
	git(t, repo, nil, "prune-packed")
	if countLoose(t, objectsDir(repo)) != 0 {
		t.Fatal("fixture: loose objects left")
	}
	got, err := db.Prefix(id[:12], 0)
	if err != nil || len(got) != 1 || got[0].String() != id {
		t.Fatalf("Prefix after repack = %v, %v; want %s", got, err, id)
	}
}
