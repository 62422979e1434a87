package odb

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strconv"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/nwdes/nwdes/gitstore/oid"
)

// maxLooseHeader bounds the "<type> <size>\x00" header: the longest type
// plus the digits of a 64-bit size fit comfortably.
const maxLooseHeader = 32

func loosePath(h oid.ID) string {
	hex := h.String()
	return hex[:2] + "/" + hex[2:]
}

func (s *store) hasLoose(h oid.ID) (bool, error) {
	root, err := s.fs()
	if err != nil {
		return false, err
	}
	_, err = root.Stat(loosePath(h))
	if err == nil {
		return true, nil
	}
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return false, fmt.Errorf("loose object in %s: %w", s.dir, err)
}

// readLoose returns an error wrapping fs.ErrNotExist when the object has no
// loose copy in s.
func (db *DB) readLoose(s *store, h oid.ID) (plumbing.ObjectType, []byte, error) {
	root, err := s.fs()
	if err != nil {
		return plumbing.InvalidObject, nil, err
	}
	f, err := root.Open(loosePath(h))
	if err != nil {
		return plumbing.InvalidObject, nil, fmt.Errorf("loose object in %s: %w", s.dir, err)
	}
	defer f.Close()
	typ, data, err := db.parseLoose(f)
	if err != nil {
		return plumbing.InvalidObject, nil, fmt.Errorf("loose object in %s: %w", s.dir, err)
	}
	return typ, data, nil
}

func (db *DB) parseLoose(r io.Reader) (plumbing.ObjectType, []byte, error) {
	zr, err := db.zlibReader(r)
	if err != nil {
		return plumbing.InvalidObject, nil, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	defer db.putZlib(zr)
	br := db.bufioReader(zr, &db.loosePool, 512)
	defer db.loosePool.Put(br)

	var hdr []byte
	for {
		c, err := br.ReadByte()
		if err != nil {
			return plumbing.InvalidObject, nil, fmt.Errorf("truncated header: %w: %w", ErrCorrupt, noEOF(err))
		}
		if c == 0 {
			break
		}
		if len(hdr) == maxLooseHeader {
			return plumbing.InvalidObject, nil, fmt.Errorf("header too long: %w", ErrCorrupt)
		}
		hdr = append(hdr, c)
	}
	typName, sizeStr, ok := bytes.Cut(hdr, []byte{' '})
	if !ok {
		return plumbing.InvalidObject, nil, fmt.Errorf("malformed header %q: %w", hdr, ErrCorrupt)
	}
	typ, err := plumbing.ParseObjectType(string(typName))
	if err != nil || !isBaseType(typ) {
		return plumbing.InvalidObject, nil, fmt.Errorf("unknown object type %q: %w", typName, ErrCorrupt)
	}
	size, err := parseSize(sizeStr)
	if err != nil {
		return plumbing.InvalidObject, nil, fmt.Errorf("header %q: %w: %w", hdr, ErrCorrupt, err)
	}
	if err := db.checkSize(size); err != nil {
		return plumbing.InvalidObject, nil, err
	}
	data, err := readExact(br, size)
	if err != nil {
		return plumbing.InvalidObject, nil, fmt.Errorf("body shorter than declared %d bytes: %w: %w", size, ErrCorrupt, err)
	}
	var one [1]byte
	n, err := io.ReadFull(br, one[:])
	if n != 0 {
		return plumbing.InvalidObject, nil, fmt.Errorf("body longer than declared %d bytes: %w", size, ErrCorrupt)
	}
	if err != io.EOF {
		return plumbing.InvalidObject, nil, fmt.Errorf("inflate: %w: %w", ErrCorrupt, err)
	}
	return typ, data, nil
}

// parseSize accepts only plain decimal digits: strconv.ParseInt would also
// take a sign, which git's header parser rejects.
func parseSize(b []byte) (int64, error) {
	if len(b) == 0 || len(b) > 19 {
		return 0, fmt.Errorf("bad size %q", b)
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("bad size %q", b)
		}
	}
	return strconv.ParseInt(string(b), 10, 64)
}

func isBaseType(t plumbing.ObjectType) bool {
	switch t {
	case plumbing.CommitObject, plumbing.TreeObject, plumbing.BlobObject, plumbing.TagObject:
		return true
	}
	return false
}
