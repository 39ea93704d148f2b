//go:build js || wasip1

package client

import "errors"

// Where package bloom writes no files (js, wasip1), a copy is kept in
// memory only.
var errNoFiles = errors.New("client: NewCopy: CopyOptions.Path is not available on js and wasip1, where package bloom writes no files")

func (cp *Copy) load() error { return errNoFiles }

func (cp *Copy) save() error { return &fileError{errNoFiles} }
