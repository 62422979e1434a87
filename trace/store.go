package trace

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/internal/lazyre"
	"github.com/nwdes/nwdes/refusal"
)

// RefPrefix is the family of trace stores: the store named N lives in the
// ref refs/nwdes/traces/N. A store only grows: the family is fast-forward
// (a diverged store is refused, never merged) and every record immutable.
const RefPrefix gitstore.RefName = "refs/nwdes/traces/"

// KindBundle is a stored bundle.
//
// trace.bundle v1: at bundles/<receipt hex>-<record bytes>; body
// {"receipt": the validation receipt, exactly as Validate wrote it};
// payload "bundle", the bundle's exact bytes. <receipt hex> is the hex
// SHA-256 of the receipt (Receipt.ID) and <record bytes> what the record
// counts against the store's limits: its record.json plus the bundle.
const KindBundle gitstore.Kind = "trace.bundle"

// KindBundleVersion is the newest trace.bundle version.
const KindBundleVersion = 1

// StorageReceiptVersion is the storage receipt format ("v"). Format
// history: v1, first.
const StorageReceiptVersion = 1

// Default limits of one store.
const (
	DefaultMaxRecords     = 1024
	DefaultMaxRecordBytes = 1 << 20
	DefaultMaxTotalBytes  = 256 << 20
)

const (
	bundlesDir  = "bundles"
	bundleBlob  = "bundle"
	storeRemedy = "run git nwdes fsck; restore the store's ref from a good clone (git nwdes fetch) or its reflog"
)

var (
	namePattern  = lazyre.New(`^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`)
	entryPattern = lazyre.New(`^([0-9a-f]{64})-([1-9][0-9]{0,9})$`)
)

// Register declares the trace stores' ref family and record kind.
func Register(r *gitstore.Registry) error {
	if err := r.DeclareKind(gitstore.KindSpec{Kind: KindBundle, Version: KindBundleVersion, Check: CheckRecord}); err != nil {
		return err
	}
	return r.DeclareRef(gitstore.RefSpec{
		Ref: RefPrefix, Policy: gitstore.PolicyFastForward, History: gitstore.HistoryChain,
		Layout: []string{bundlesDir}, Immutable: []string{bundlesDir}, Kinds: []gitstore.Kind{KindBundle},
	})
}

// Ref returns the ref of the trace store named name, refusing
// (RefNameInvalid) a name that is not 1 to 64 letters, digits, '_' or '-'
// starting with a letter or digit.
func Ref(name string) (gitstore.RefName, error) {
	if !namePattern.MatchString(name) {
		return "", refusal.New(refusal.RefNameInvalid,
			"name a trace store with 1 to 64 letters, digits, '_' or '-'",
			"trace store name %q is not allowed", clip(name))
	}
	return RefPrefix + gitstore.RefName(name), nil
}

// Store keeps sealed trace bundles, byte for byte, each with the receipt
// Validate issued for it, in named trace stores (one ref each) of a
// gitstore.Store opened with a registry that includes Register.
//
// Append publishes a record with one compare-and-swap of the store's ref,
// so concurrent appenders (goroutines or processes) lose nothing: one
// wins each round and the others re-read the new tip and check again.
// One session and attempt may hold several records, told apart by their
// final digest; none is newest. A full store refuses (TraceStoreFull):
// nothing is evicted, pruned or rewritten.
//
// Zero limits take the defaults. A Store is safe for concurrent use.
type Store struct {
	// Store keeps the records: the git store, or memstore in tests.
	Store Records
	// MaxRecords caps the records of one store (DefaultMaxRecords).
	MaxRecords int
	// MaxRecordBytes caps one record: record.json plus the bundle
	// (DefaultMaxRecordBytes). The gitstore.Store's own record limit
	// applies as well.
	MaxRecordBytes int
	// MaxTotalBytes caps the records of one store together
	// (DefaultMaxTotalBytes).
	MaxTotalBytes int64
}

// Records is what a trace store asks of the store under it: append by
// compare-and-swap, and read with the history checked.
type Records interface {
	gitstore.RecordWriter
	gitstore.AppendOnly
}

func (s *Store) limits() (records, recordBytes int, total int64) {
	records, recordBytes, total = s.MaxRecords, s.MaxRecordBytes, s.MaxTotalBytes
	if records <= 0 {
		records = DefaultMaxRecords
	}
	if recordBytes <= 0 {
		recordBytes = DefaultMaxRecordBytes
	}
	if total <= 0 {
		total = DefaultMaxTotalBytes
	}
	return records, recordBytes, total
}

// StorageReceipt names one stored bundle: which store and record hold it,
// the validation receipt it was stored with (Receipt, the key Read takes),
// and that receipt's replay key and bundle digest. It holds no time and no
// commit: appending the same bundle again returns the same storage
// receipt, byte for byte.
type StorageReceipt struct {
	Attempt      string           `json:"attempt"`
	BundleBytes  int              `json:"bundle_bytes"`
	BundleSHA256 string           `json:"bundle_sha256"`
	Count        int              `json:"count"`
	FinalDigest  string           `json:"final_digest"`
	Receipt      string           `json:"receipt"`
	Record       string           `json:"record"`
	RecordBytes  int              `json:"record_bytes"`
	Ref          gitstore.RefName `json:"ref"`
	Session      string           `json:"session"`
	Store        string           `json:"store"`
	V            int              `json:"v"`
}

// Bytes returns the storage receipt's canonical JSON.
func (r *StorageReceipt) Bytes() ([]byte, error) { return gitstore.Canonical(r) }

// Entry is one record of a trace store, as List finds it: the storage
// receipt Append returned for it.
type Entry struct {
	StorageReceipt
}

// prepared is one bundle ready to store.
type prepared struct {
	receipt *Receipt
	rec     *gitstore.Record
	entry   string // <receipt hex>-<record bytes>
	size    int
}

func prepare(r *Receipt, bundle []byte) (*prepared, error) {
	rec, err := gitstore.NewRecord(KindBundle, KindBundleVersion, storedBody{Receipt: r.Bytes()})
	if err != nil {
		return nil, err
	}
	rec.Payloads = map[string][]byte{bundleBlob: bundle}
	enc, err := rec.JSON()
	if err != nil {
		return nil, err
	}
	size := len(enc) + len(bundle)
	return &prepared{receipt: r, rec: rec, size: size,
		entry: strings.TrimPrefix(r.ID(), "sha256:") + "-" + strconv.Itoa(size)}, nil
}

func (p *prepared) storage(name string, ref gitstore.RefName) *StorageReceipt {
	r := p.receipt
	return &StorageReceipt{
		Attempt: r.Attempt, Session: r.Session, Count: r.Count, FinalDigest: r.FinalDigest,
		BundleBytes: r.BundleBytes, BundleSHA256: r.BundleSHA256,
		Receipt: r.ID(), Record: bundlesDir + "/" + p.entry, RecordBytes: p.size,
		Ref: ref, Store: name, V: StorageReceiptVersion,
	}
}

type storedBody struct {
	Receipt json.RawMessage `json:"receipt"`
}

// Append validates a private copy of bundle against session and attempt
// (TraceInvalid naming the first defect) and stores it with its receipt in
// the trace store name by one compare-and-swap of the store's ref. An
// identical replay (the same bytes for the same session and attempt)
// returns the same storage receipt and adds nothing, even to a full store.
// It refuses a record over MaxRecordBytes (RecordTooLarge), a store at
// MaxRecords or that the record would take past MaxTotalBytes
// (TraceStoreFull), and a store whose record for this receipt differs from
// the bundle (ReceiptMismatch).
func (s *Store) Append(ctx context.Context, name, session, attempt string, bundle []byte) (*StorageReceipt, error) {
	ref, err := Ref(name)
	if err != nil {
		return nil, err
	}
	snapshot := bytes.Clone(bundle)
	r, err := Validate(session, attempt, snapshot)
	if err != nil {
		return nil, fmt.Errorf("append to trace store %s: %w", name, err)
	}
	p, err := prepare(r, snapshot)
	if err != nil {
		return nil, fmt.Errorf("append to trace store %s: %w", name, err)
	}
	maxRecords, maxRecord, maxTotal := s.limits()
	if p.size > maxRecord {
		return nil, refusal.New(refusal.RecordTooLarge, "store a smaller bundle, or raise the trace store's record limit",
			"trace record for session %s attempt %s is %d bytes, over the limit of %d", session, attempt, p.size, maxRecord)
	}
	msg := fmt.Sprintf("trace: append session %s attempt %s\n\nreceipt %s\nfinal digest %s\n", session, attempt, r.ID(), r.FinalDigest)
	_, err = s.Store.Change(ctx, ref, msg, func(tx gitstore.Edit) error {
		entries, err := readEntries(tx)
		if err != nil {
			return err
		}
		var total int64
		for _, e := range entries {
			if e.hex+"-"+strconv.Itoa(e.size) == p.entry {
				return sameRecord(tx, p)
			}
			if "sha256:"+e.hex == r.ID() {
				return refusal.NewUnreadable(refusal.ReceiptMismatch, storeRemedy,
					"%s holds %s/%s for receipt %s, which is not this bundle's record", ref, bundlesDir, e.name, r.ID())
			}
			total += int64(e.size)
		}
		if len(entries) >= maxRecords {
			return refusal.New(refusal.TraceStoreFull, "append to another trace store; nothing is evicted",
				"trace store %s holds %d records, its limit", name, len(entries))
		}
		if total+int64(p.size) > maxTotal {
			return refusal.New(refusal.TraceStoreFull, "append to another trace store; nothing is evicted",
				"trace store %s holds %d bytes; %d more would pass its limit of %d", name, total, p.size, maxTotal)
		}
		return tx.Put(bundlesDir+"/"+p.entry, p.rec)
	})
	if err != nil {
		return nil, fmt.Errorf("append to trace store %s: %w", name, err)
	}
	return p.storage(name, ref), nil
}

// sameRecord lets an identical replay through (staging nothing) and
// refuses a record at the same path holding anything else.
func sameRecord(tx gitstore.View, p *prepared) error {
	path := bundlesDir + "/" + p.entry
	got, err := tx.Get(path)
	if err != nil {
		return err
	}
	want, _ := p.rec.JSON()
	have, err := got.JSON()
	if err != nil || !bytes.Equal(have, want) || len(got.Payloads) != 1 || !bytes.Equal(got.Payloads[bundleBlob], p.rec.Payloads[bundleBlob]) || !got.TreeID.IsZero() {
		return refusal.NewUnreadable(refusal.ReceiptMismatch, storeRemedy,
			"%s:%s is not the record stored for receipt %s (changed after it was written)", tx.Ref(), path, p.receipt.ID())
	}
	return nil
}

type storedEntry struct {
	name, hex string
	size      int
}

// readEntries lists the bundles directory, refusing a name no Append
// writes (fsck names it too).
func readEntries(tx gitstore.View) ([]storedEntry, error) {
	des, err := tx.ReadDir(bundlesDir)
	if err != nil {
		return nil, err
	}
	out := make([]storedEntry, 0, len(des))
	for _, de := range des {
		m := entryPattern.FindStringSubmatch(de.Name)
		size := 0
		if m != nil {
			size, err = strconv.Atoi(m[2])
		}
		if m == nil || err != nil || de.Mode != gitstore.ModeTree {
			return nil, refusal.NewUnreadable(refusal.RecordMalformed, storeRemedy,
				"%s holds %s/%s, which is not a trace record (<receipt hex>-<bytes>)", tx.Ref(), bundlesDir, clip(de.Name))
		}
		out = append(out, storedEntry{name: de.Name, hex: m[1], size: size})
	}
	return out, nil
}

// Read returns the exact bytes of the bundle stored under receipt (a
// Receipt.ID, "sha256:<hex>") in the trace store name, after checking them
// against the receipt and validating them again under the same session
// and attempt: a missing record, stored bytes that differ from what the
// receipt names, or a receipt Validate would no longer issue for them are
// refused (ReceiptMismatch). The store's history is checked first
// (gitstore.Store.CheckHistory): a bundle dropped or changed by any commit
// is HistoryRewritten, not an absent record.
func (s *Store) Read(name, receipt string) ([]byte, error) {
	ref, err := Ref(name)
	if err != nil {
		return nil, err
	}
	if !digestPattern.MatchString(receipt) {
		return nil, refusal.NewUnreadable(refusal.ReceiptMismatch, "give the receipt Append returned (sha256:<64 hex>)",
			"%q is not a trace receipt id", clip(receipt))
	}
	tx, err := s.Store.VerifiedRecords(ref)
	if err != nil {
		return nil, fmt.Errorf("read trace store %s: %w", name, err)
	}
	entries, err := readEntries(tx)
	if err != nil {
		return nil, fmt.Errorf("read trace store %s: %w", name, err)
	}
	hex := strings.TrimPrefix(receipt, "sha256:")
	for _, e := range entries {
		if e.hex != hex {
			continue
		}
		path := bundlesDir + "/" + e.name
		rec, err := tx.Get(path)
		if err != nil {
			return nil, fmt.Errorf("read trace store %s: %w", name, err)
		}
		b, err := checkStored(path, rec)
		if err != nil {
			return nil, fmt.Errorf("read trace store %s: %w", name, err)
		}
		return b, nil
	}
	return nil, refusal.NewUnreadable(refusal.ReceiptMismatch, "give a receipt this trace store issued (trace list names them)",
		"trace store %s holds no record for receipt %s", name, receipt)
}

// List returns the storage receipt of every record in the trace store
// name, sorted by session, attempt and final digest (none is newest). It
// reads each record's receipt, not its bundle; an absent store is empty.
// The store's history is checked first (gitstore.Store.CheckHistory): a
// store some commit dropped a bundle from is HistoryRewritten, never listed
// short.
func (s *Store) List(name string) ([]Entry, error) {
	ref, err := Ref(name)
	if err != nil {
		return nil, err
	}
	tx, err := s.Store.VerifiedRecords(ref)
	if err != nil {
		return nil, fmt.Errorf("list trace store %s: %w", name, err)
	}
	entries, err := readEntries(tx)
	if err != nil {
		return nil, fmt.Errorf("list trace store %s: %w", name, err)
	}
	out := make([]Entry, 0, len(entries))
	for _, e := range entries {
		path := bundlesDir + "/" + e.name
		r, err := readReceipt(tx, path)
		if err != nil {
			return nil, fmt.Errorf("list trace store %s: %w", name, err)
		}
		if r.ID() != "sha256:"+e.hex {
			return nil, refusal.NewUnreadable(refusal.ReceiptMismatch, storeRemedy,
				"%s:%s holds receipt %s, not the one it is named for", ref, path, r.ID())
		}
		out = append(out, Entry{StorageReceipt{
			Attempt: r.Attempt, Session: r.Session, Count: r.Count, FinalDigest: r.FinalDigest,
			BundleBytes: r.BundleBytes, BundleSHA256: r.BundleSHA256,
			Receipt: r.ID(), Record: path, RecordBytes: e.size,
			Ref: ref, Store: name, V: StorageReceiptVersion,
		}})
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Session != b.Session {
			return a.Session < b.Session
		}
		if a.Attempt != b.Attempt {
			return a.Attempt < b.Attempt
		}
		return a.FinalDigest < b.FinalDigest
	})
	return out, nil
}

// readReceipt reads the receipt of the record at path from its
// record.json alone, leaving the bundle unread.
func readReceipt(tx gitstore.View, path string) (*Receipt, error) {
	b, err := tx.ReadBlob(path + "/record.json")
	if err != nil {
		return nil, err
	}
	malformed := func(why string) error {
		return refusal.NewUnreadable(refusal.RecordMalformed, storeRemedy, "%s:%s/record.json %s", tx.Ref(), path, why)
	}
	if err := gitstore.CheckCanonical(b); err != nil {
		return nil, malformed("is not canonical JSON")
	}
	var env struct {
		Body json.RawMessage `json:"body"`
		Kind gitstore.Kind   `json:"kind"`
		V    int             `json:"v"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&env); err != nil {
		return nil, malformed("is not a record envelope")
	}
	rec := &gitstore.Record{Kind: env.Kind, V: env.V, Body: env.Body}
	if again, err := rec.JSON(); err != nil || !bytes.Equal(again, b) {
		return nil, malformed("is not a record envelope")
	}
	return storedReceipt(path, rec)
}

// storedReceipt decodes a trace.bundle record's receipt.
func storedReceipt(path string, rec *gitstore.Record) (*Receipt, error) {
	if rec.Kind != KindBundle || rec.V != KindBundleVersion {
		return nil, refusal.NewUnreadable(refusal.RecordMalformed, storeRemedy,
			"%s holds a %s v%d record, not %s v%d", path, rec.Kind, rec.V, KindBundle, KindBundleVersion)
	}
	var body storedBody
	if err := rec.Decode(&body); err != nil {
		return nil, err
	}
	r, err := ParseReceipt(body.Receipt)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

// checkStored checks a trace.bundle record whole and returns a copy of its
// bundle: its path names its receipt and size, the bundle's bytes are
// those the receipt names, and validating them again issues that receipt.
func checkStored(at string, rec *gitstore.Record) ([]byte, error) {
	mismatch := func(format string, args ...any) *refusal.Error {
		return refusal.NewUnreadable(refusal.ReceiptMismatch, storeRemedy, "%s: %s", at, fmt.Sprintf(format, args...))
	}
	r, err := storedReceipt(at, rec)
	if err != nil {
		return nil, err
	}
	bundle, ok := rec.Payloads[bundleBlob]
	if !ok || len(rec.Payloads) != 1 || !rec.TreeID.IsZero() {
		return nil, mismatch("the record must hold exactly one payload, %q", bundleBlob)
	}
	p, err := prepare(r, bundle)
	if err != nil {
		return nil, err
	}
	if path.Dir(at) != bundlesDir || path.Base(at) != p.entry {
		return nil, mismatch("the record belongs at %s/%s", bundlesDir, p.entry)
	}
	if len(bundle) != r.BundleBytes || digestOf(bundle) != r.BundleSHA256 {
		return nil, mismatch("the stored bundle (%d bytes, %s) is not the one receipt %s names (%d bytes, %s)",
			len(bundle), digestOf(bundle), r.ID(), r.BundleBytes, r.BundleSHA256)
	}
	again, err := Validate(r.Session, r.Attempt, bundle)
	if err != nil {
		return nil, mismatch("the stored bundle no longer validates: %v", err).Wrap(err)
	}
	if again.ID() != r.ID() {
		return nil, mismatch("validating the stored bundle issues receipt %s, not %s", again.ID(), r.ID())
	}
	return bytes.Clone(bundle), nil
}

// CheckRecord is fsck's check of a trace.bundle record (KindSpec.Check):
// the record is where its receipt and size put it, its bundle is the one
// the receipt names, and validating it again issues the same receipt.
func CheckRecord(_ gitstore.View, at string, r *gitstore.Record) error {
	_, err := checkStored(at, r)
	return err
}

// WriteOut writes b to a new file at path with mode 0400, refusing
// (OutputExists) a path that exists, a symbolic link included: the file is
// created with O_EXCL and O_NOFOLLOW, never opened through a link or
// truncated. A file it could not write whole is removed.
func WriteOut(b []byte, file string) (err error) {
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_EXCL|noFollow, 0o400)
	if errors.Is(err, fs.ErrExist) {
		return refusal.New(refusal.OutputExists, "name a path that does not exist; a trace is never written over anything",
			"%s exists", file)
	}
	if err != nil {
		return fmt.Errorf("write trace to %s: %w", file, err)
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("write trace to %s: %w", file, cerr)
		}
		if err != nil {
			_ = os.Remove(file)
		}
	}()
	// The umask may have taken bits from 0400; the mode is exact.
	if err := f.Chmod(0o400); err != nil {
		return fmt.Errorf("write trace to %s: %w", file, err)
	}
	if _, err := f.Write(b); err != nil {
		return fmt.Errorf("write trace to %s: %w", file, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("write trace to %s: %w", file, err)
	}
	return nil
}
