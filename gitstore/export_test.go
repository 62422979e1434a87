package gitstore

// UnsupportedSyntax lets the external differential tests ask which revision
// syntax Resolve refuses up front, instead of keeping a copy of the list.
var UnsupportedSyntax = unsupportedSyntax
