//go:build !js && !wasip1

package bloom

// many runs a batch on a file-backed filter, taking the lock shared for
// each group.
func (ff *FileFilter) many(keys keyList, add bool, dst []bool) []bool {
	dst = grow(dst, keys.len())
	var hs [group]uint64
	for keys.len() > 0 {
		if add && ff.readOnly {
			ff.setErr(ErrReadOnly)
			return append(dst, make([]bool, keys.len())...)
		}
		dst = ff.group(&keys, &hs, add, dst)
	}
	return dst
}

// group runs the next group of a batch. It unlocks by defer, as Add does:
// a program that turns a fault of a file truncated under it into a panic
// (see FileFilter) can still Close the filter.
func (ff *FileFilter) group(keys *keyList, hs *[group]uint64, add bool, dst []bool) []bool {
	f := ff.live()
	defer ff.mu.RUnlock()
	if add && !ff.dirty.Load() {
		ff.markDirty()
	}
	h := keys.next(hs, f.seed)
	if add {
		return f.addDigestsAtomic(h, dst)
	}
	return f.hasDigests(h, dst)
}

// AddMany is Filter.AddMany for a file-backed filter; batches run in
// parallel with each other and with Add and Has, as Add does. On a filter
// opened read-only it changes nothing, answers false for every key and
// sets Err to ErrReadOnly.
func (ff *FileFilter) AddMany(keys [][]byte, dst []bool) []bool {
	return ff.many(bytesList(keys), true, dst)
}

// AddManyString is AddMany for strings, hashed as their UTF-8 bytes.
func (ff *FileFilter) AddManyString(keys []string, dst []bool) []bool {
	return ff.many(stringList(keys), true, dst)
}

// HasMany is Filter.HasMany for a file-backed filter.
func (ff *FileFilter) HasMany(keys [][]byte, dst []bool) []bool {
	return ff.many(bytesList(keys), false, dst)
}

// HasManyString is HasMany for strings, hashed as their UTF-8 bytes.
func (ff *FileFilter) HasManyString(keys []string, dst []bool) []bool {
	return ff.many(stringList(keys), false, dst)
}
