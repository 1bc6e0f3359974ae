package format

// NumRecords returns the number of records of src, without building the
// list where src is a RecordLister.
func NumRecords(src Source) int {
	if l, ok := src.(RecordLister); ok {
		return l.NumRecords()
	}
	return len(src.Records())
}

// RecordAt returns record i of src, without building the list where src
// is a RecordLister. It panics for i out of range, as indexing Records
// does.
func RecordAt(src Source, i int) Record {
	if l, ok := src.(RecordLister); ok {
		return l.Record(i)
	}
	return src.Records()[i]
}

// EachRecord calls fn with each record of src in file order, stopping at
// the first error fn returns, which it returns. Where src is a
// RecordLister, the records are built one at a time and the list is never
// held. *r must not be changed, nor r kept after fn returns (copy *r to
// keep it).
func EachRecord(src Source, fn func(i int, r *Record) error) error {
	if l, ok := src.(RecordLister); ok {
		var r Record
		n := l.NumRecords()
		for i := 0; i < n; i++ {
			r = l.Record(i)
			if err := fn(i, &r); err != nil {
				return err
			}
		}
		return nil
	}
	recs := src.Records()
	for i := range recs {
		if err := fn(i, &recs[i]); err != nil {
			return err
		}
	}
	return nil
}
