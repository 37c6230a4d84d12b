package assembly

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ctxhost/ctxhost/sdk"
)

func TestFormatsAssemble(t *testing.T) {
	boom := errors.New("boom")
	fs := Formats{
		{FormatInfo: sdk.FormatInfo{Name: "api", MediaType: "application/json"},
			Build: func(_ sdk.AssembleRequest, p Parts) (sdk.AssembleResult, error) {
				return sdk.AssembleResult{Payload: []byte(p.Input)}, nil
			}},
		{FormatInfo: sdk.FormatInfo{Name: "cli", MediaType: "text/plain"},
			Build: func(sdk.AssembleRequest, Parts) (sdk.AssembleResult, error) {
				return sdk.AssembleResult{MediaType: "text/x-custom", Payload: []byte("x")}, nil
			}},
		{FormatInfo: sdk.FormatInfo{Name: "broken", MediaType: "text/plain"},
			Build: func(sdk.AssembleRequest, Parts) (sdk.AssembleResult, error) {
				return sdk.AssembleResult{}, boom
			}},
	}
	input := []sdk.Component{{Name: sdk.ComponentInput, Slot: sdk.SlotInput, Text: "hi"}}
	tests := []struct {
		format  string
		want    sdk.AssembleResult
		wantErr string
		is      error
	}{
		{format: "", want: sdk.AssembleResult{Payload: []byte("hi"), MediaType: "application/json"}},
		{format: "cli", want: sdk.AssembleResult{Payload: []byte("x"), MediaType: "text/x-custom"}},
		{format: "broken", wantErr: `demo assembler: format "broken": boom`, is: boom},
		{format: "xml", wantErr: `demo assembler: invalid arguments: unknown format "xml" (known: api, cli, broken)`, is: sdk.ErrInvalidArgs},
	}
	for _, tc := range tests {
		t.Run(tc.format, func(t *testing.T) {
			got, err := fs.Assemble("demo", sdk.AssembleRequest{Format: tc.format, Components: input})
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr || !errors.Is(err, tc.is) {
					t.Fatalf("error = %v, want %q wrapping %v", err, tc.wantErr, tc.is)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("result (-want +got):\n%s", d)
			}
		})
	}
	if d := cmp.Diff([]string{"api", "cli", "broken"}, func() (n []string) {
		for _, f := range fs.Info() {
			n = append(n, f.Name)
		}
		return n
	}()); d != "" {
		t.Errorf("Info names (-want +got):\n%s", d)
	}
}
