package msgeq

import (
	"reflect"
	"testing"

	"github.com/ctxhost/ctxhost/sdk"
)

// other returns a value of t different from v (v's zero or not): a field
// set to it makes its struct differ in that field alone.
func other(t *testing.T, v reflect.Value) reflect.Value {
	t.Helper()
	out := reflect.New(v.Type()).Elem()
	switch v.Kind() {
	case reflect.String:
		out.SetString(v.String() + "x")
	case reflect.Int, reflect.Int64, reflect.Int32:
		out.SetInt(v.Int() + 1)
	case reflect.Bool:
		out.SetBool(!v.Bool())
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			out.SetBytes(append(append([]byte(nil), v.Bytes()...), 'x'))
			break
		}
		out = reflect.Append(reflect.MakeSlice(v.Type(), 0, v.Len()+1), reflect.New(v.Type().Elem()).Elem())
		if v.Len() > 0 {
			out = reflect.AppendSlice(reflect.MakeSlice(v.Type(), 0, v.Len()+1), v)
			out = reflect.Append(out, reflect.New(v.Type().Elem()).Elem())
		}
	case reflect.Map:
		out = reflect.MakeMap(v.Type())
		for _, k := range v.MapKeys() {
			out.SetMapIndex(k, v.MapIndex(k))
		}
		out.SetMapIndex(reflect.ValueOf("added"), reflect.ValueOf("x"))
	default:
		t.Fatalf("no other value for a %s field: teach this test the field's type", v.Type())
	}
	return out
}

// filled is a message whose every field, and its parts' and tool calls'
// fields, holds a value that is not its zero.
func filled() sdk.Message {
	return sdk.Message{ID: "m1", Role: "assistant", Name: "n", SpeakerType: "ai", Content: "c",
		Parts: []sdk.Part{{Type: sdk.PartImage, Text: "t", MediaType: "image/png", Data: []byte{1, 2}, URL: "u", Width: 3, Height: 4,
			Detail: "low", Pages: 5, Title: "ti", Signature: "s", Opaque: "o", Provider: "p"}},
		ToolCallID: "tc", ToolName: "tn", ToolCalls: []sdk.ToolCall{{ID: "c1", Name: "read", Arguments: "{}", Signature: "sig"}},
		Metadata: map[string]string{"k": "v"}, Kind: sdk.KindAction, Pinned: true}
}

// checkFilled fails when a field of v's struct type is zero in v: a
// field added to the type must be filled here too, so that it is changed
// below.
func checkFilled(t *testing.T, v reflect.Value) {
	t.Helper()
	for i := range v.NumField() {
		if v.Field(i).IsZero() {
			t.Errorf("%s.%s is zero in the test's filled message: give it a value", v.Type().Name(), v.Type().Field(i).Name)
		}
	}
}

// TestEqualComparesEveryField: a message differing from another in any
// one field — of the message, of one of its parts or of one of its tool
// calls — is not Equal, found by reflection over the struct fields, so
// that a field added to sdk.Message, sdk.Part or sdk.ToolCall without
// being compared fails here.
func TestEqualComparesEveryField(t *testing.T) {
	base := filled()
	checkFilled(t, reflect.ValueOf(base))
	checkFilled(t, reflect.ValueOf(base.Parts[0]))
	checkFilled(t, reflect.ValueOf(base.ToolCalls[0]))
	same := filled()
	if !Equal(&base, &same) {
		t.Fatal("two filled messages are not Equal")
	}
	// change changes field i of the struct of m that of picks, alone.
	change := func(name string, of func(m *sdk.Message) reflect.Value) {
		typ := of(&same).Type()
		for i := range typ.NumField() {
			m := filled()
			f := of(&m).Field(i)
			f.Set(other(t, f))
			if Equal(&base, &m) || Equal(&m, &base) {
				t.Errorf("a message whose %s.%s differs is Equal", name, typ.Field(i).Name)
			}
			if Prefix([]sdk.Message{base}, []sdk.Message{m}) != 0 {
				t.Errorf("Prefix takes a message whose %s.%s differs for repeated", name, typ.Field(i).Name)
			}
		}
	}
	change("Message", func(m *sdk.Message) reflect.Value { return reflect.ValueOf(m).Elem() })
	change("Part", func(m *sdk.Message) reflect.Value { return reflect.ValueOf(&m.Parts[0]).Elem() })
	change("ToolCall", func(m *sdk.Message) reflect.Value { return reflect.ValueOf(&m.ToolCalls[0]).Elem() })
}

// TestSameHeaderComparesEveryField: a component differing in any one
// field but its messages is not SameHeader, nor one that carries
// messages and one that does not (by reflection, as for messages).
func TestSameHeaderComparesEveryField(t *testing.T) {
	filledComponent := func() sdk.Component {
		return sdk.Component{Name: "history", Priority: 2, Compactable: true, Slot: "history", Text: "t",
			Messages: []sdk.Message{filled()}, Metadata: map[string]string{"k": "v"}}
	}
	base := filledComponent()
	checkFilled(t, reflect.ValueOf(base))
	same := filledComponent()
	if !SameHeader(&base, &same) {
		t.Fatal("two filled components are not SameHeader")
	}
	typ := reflect.TypeOf(sdk.Component{})
	for i := range typ.NumField() {
		c := filledComponent()
		f := reflect.ValueOf(&c).Elem().Field(i)
		if typ.Field(i).Name == "Messages" {
			f.Set(reflect.Zero(f.Type())) // a text component; the messages themselves are compared by Equal
		} else {
			f.Set(other(t, f))
		}
		if SameHeader(&base, &c) || SameHeader(&c, &base) {
			t.Errorf("a component whose %s differs is SameHeader", typ.Field(i).Name)
		}
	}
}

// TestOwnCopiesEverything: changing in place what a message holds by
// reference (its parts, their data, its tool calls, its metadata) after
// Own leaves the copy as it was.
func TestOwnCopiesEverything(t *testing.T) {
	m := filled()
	own := Own(m)
	m.Parts[0].Text = "changed"
	m.Parts[0].Data[0] = 9
	m.ToolCalls[0].Signature = "changed"
	m.Metadata["k"] = "changed"
	if want := filled(); !Equal(&own, &want) {
		t.Errorf("the copy changed with the original: %+v", own)
	}
	c := sdk.Component{Messages: []sdk.Message{filled()}, Metadata: map[string]string{"k": "v"}}
	oc := OwnComponent(c)
	c.Messages[0].Parts[0].Data[1] = 9
	c.Metadata["k"] = "changed"
	if want := filled(); !Equal(&oc.Messages[0], &want) || oc.Metadata["k"] != "v" {
		t.Errorf("the component's copy changed with the original: %+v", oc)
	}
}
