package bloom

// An Info describes an encoded filter, as read from its header alone.
type Info struct {
	Kind     string  // "classic", "counting", "scalable", "window" or "blocked"
	Seed     uint64  // hash seed
	Bits     uint64  // m: bits or counters; for scalable, of all layers
	Hashes   uint32  // k; 0 for scalable, whose layers differ; 8 for blocked
	Layers   uint32  // layers of a scalable filter, generations of a window, else 0
	Count    uint64  // keys added, as recorded
	Capacity uint64  // capacity it was made for, 0 when unknown
	FPRate   float64 // target false-positive rate, 0 when unknown
	Size     uint64  // length of the whole encoding in bytes
	Dirty    bool    // a file-backed filter changed after its last Sync (see Open)
}

// HeaderSize is the number of bytes Inspect needs.
const HeaderSize = headerSize

// Inspect reads the header at the start of an encoded filter and checks it
// as the decoders do, with the bound maxBits, without reading the payload or
// allocating. It lets a caller refuse an oversized or foreign input before
// reading the rest; Size says how long the whole encoding must be. A header
// of a kind the format does not have is checked as Decode checks it, and
// gets ErrKind.
func Inspect(header []byte, maxBits uint64) (Info, error) {
	kind := uint8(kindClassic)
	if len(header) > 5 && header[5] >= kindClassic && header[5] <= kindBlocked {
		kind = header[5]
	}
	return InspectKind(header, kind, maxBits)
}

// InspectKind is Inspect for the decoder of one kind, numbered as the
// format numbers them (1 classic, 2 counting, 3 scalable, 4 window, 5
// blocked; docs/format.md): the header is checked in the order that
// kind's decoder checks it, so a header of another kind gets ErrKind after
// the checks that come before the kind (magic, version, hash scheme,
// flags), as the decoder gives it, and not the error its own kind's checks
// would give. The npm module checks a record with it before it copies the
// rest, so that it refuses what Go refuses with the same code.
func InspectKind(header []byte, kind uint8, maxBits uint64) (Info, error) {
	if len(header) < headerSize {
		return Info{}, wrap(ErrCorrupt, "header shorter than 64 bytes")
	}
	h, err := decodeHeader(header, kind, maxBits)
	if err != nil {
		return Info{}, err
	}
	return Info{
		Kind: kindName(h.kind), Seed: h.seed, Bits: h.m, Hashes: h.k, Layers: h.parts,
		Count: h.count, Capacity: h.capacity, FPRate: h.fpRate, Size: recordSize(h.payload),
		Dirty: h.flags&flagDirty != 0,
	}, nil
}
