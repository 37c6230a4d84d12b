package provider

import "encoding/json"

// ReadJSON reads the JSON document data into v as json.Unmarshal reads
// it: in one pass with read, v's reader over a JSONReader, which reports
// whether it read the whole document, or, where it declines it (false:
// a document it is not sure to read alike, see JSONReader), with
// json.Unmarshal into a zero v, which decodes or refuses it as it
// decides. Nothing the declining reader set is left in v. The error is
// json.Unmarshal's, unwrapped.
func ReadJSON[T any](data []byte, v *T, read func(data []byte, v *T) bool) error {
	if read(data, v) {
		return nil
	}
	var zero T
	*v = zero
	return json.Unmarshal(data, v)
}

// ReadArray reads an array with elem, the reader of one element, as
// json.Unmarshal reads it into a []T: empty (not nil) for [], nil for a
// null, and nil when the reader failed (its Done then says so).
func ReadArray[T any](r *JSONReader, elem func(r *JSONReader, v *T)) []T {
	xs := []T{}
	if !r.Array(func() {
		var zero T
		xs = append(xs, zero)
		elem(r, &xs[len(xs)-1])
	}) {
		return nil
	}
	return xs
}
