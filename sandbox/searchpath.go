package sandbox

// SearchPath is the PATH the wall's programs see and are looked up on:
// Path, or DefaultPath when empty.
func (w *Wall) SearchPath() string { return orDefault(w.Path, DefaultPath) }
