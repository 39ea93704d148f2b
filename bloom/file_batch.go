//go:build !js && !wasip1

package bloom

// many runs a batch on a file-backed filter, taking the lock shared for
// each group.
func (ff *FileFilter) many(keys keyList, add bool, dst []bool) []bool {
	dst = grow(dst, keys.len())
	var hs [group]uint64
	for keys.len() > 0 {
		f := ff.live()
		if add && ff.readOnly {
			ff.mu.RUnlock()
			ff.setErr(ErrReadOnly)
			return append(dst, make([]bool, keys.len())...)
		}
		if add && !ff.dirty.Load() {
			ff.markDirty()
		}
		h := keys.next(&hs, f.seed)
		if add {
			dst = f.addDigestsAtomic(h, dst)
		} else {
			dst = f.hasDigests(h, dst)
		}
		ff.mu.RUnlock()
	}
	return dst
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
