// Package compactjson follows compact JSON as encoding/json writes it: it reads an encoding in
// place (an object's members one at a time, a list's elements, a value's kind) without decoding
// what it skips, and tells what the encoding does with a struct's fields and with types that
// encode themselves. The field manager's shortcuts walk two objects' encodings with it, and the
// server cuts a member out of a stored encoding and copies objects as a round trip through their
// JSON would (wirecopy.go) with it. kube-apiserver has no counterpart: it decodes.
package compactjson
