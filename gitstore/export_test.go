package gitstore

import "github.com/nwdes/nwdes/gitstore/oid"

// WriteRaw stages any bytes at any path, a record.json included, as another
// program (or damage) could: fsck's tests write what Put refuses.
func WriteRaw(e Edit, path string, b []byte) error { return e.(*Tx).writeBlob(path, b) }

// CheckHistoryFrom is the check an update makes of ref at a tip it read
// (checkHistory), for tests that hand it a tip another writer has since
// moved on from.
func (s *Store) CheckHistoryFrom(ref RefName, tip oid.ID) error {
	spec, err := s.opts.Registry.refFor(ref)
	if err != nil {
		return err
	}
	_, err = s.checkHistory(ref, spec, tip)
	return err
}
