//go:build unix

package odb

import (
	"bytes"
	"github.com/nwdes/nwdes/gitstore/oid"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// The two benchmarks below informed the choice of ReadAt over mmap for
// index lookups: each opens the index of the benchmark repository, checks
// its header and looks up the four ids of a cold read.

func BenchmarkIdxLookupReadAt(b *testing.B) {
	gitDir, ids := benchRepo(b)
	idxs, _ := filepath.Glob(filepath.Join(gitDir, "objects", "pack", "*.idx"))
	b.ReportAllocs()
	for b.Loop() {
		f, err := os.Open(idxs[0])
		if err != nil {
			b.Fatal(err)
		}
		fi, err := f.Stat()
		if err != nil {
			b.Fatal(err)
		}
		x, err := parseIdx(f, fi.Size(), oid.SHA1)
		if err != nil {
			b.Fatal(err)
		}
		for _, id := range ids {
			if _, ok, err := x.find(id); !ok || err != nil {
				b.Fatal(ok, err)
			}
		}
		f.Close()
	}
}

func BenchmarkIdxLookupMmap(b *testing.B) {
	gitDir, ids := benchRepo(b)
	idxs, _ := filepath.Glob(filepath.Join(gitDir, "objects", "pack", "*.idx"))
	b.ReportAllocs()
	for b.Loop() {
		f, err := os.Open(idxs[0])
		if err != nil {
			b.Fatal(err)
		}
		fi, err := f.Stat()
		if err != nil {
			b.Fatal(err)
		}
		m, err := unix.Mmap(int(f.Fd()), 0, int(fi.Size()), unix.PROT_READ, unix.MAP_SHARED)
		if err != nil {
			b.Fatal(err)
		}
		f.Close()
		x, err := parseIdx(bytes.NewReader(m), int64(len(m)), oid.SHA1)
		if err != nil {
			b.Fatal(err)
		}
		for _, id := range ids {
			if _, ok, err := x.find(id); !ok || err != nil {
				b.Fatal(ok, err)
			}
		}
		unix.Munmap(m)
	}
}
