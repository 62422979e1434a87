package gitstore

// WriteRaw stages any bytes at any path, a record.json included, as another
// program (or damage) could: fsck's tests write what Put refuses.
var WriteRaw = (*Tx).writeBlob
