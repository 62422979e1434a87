package gitstore

// UnsupportedSyntax lets the external differential tests ask which revision
// syntax Resolve refuses up front, instead of keeping a copy of the list.
var UnsupportedSyntax = unsupportedSyntax

// WriteRaw stages any bytes at any path, a record.json included, as another
// program (or damage) could: fsck's tests write what Put refuses.
var WriteRaw = (*Tx).writeBlob
