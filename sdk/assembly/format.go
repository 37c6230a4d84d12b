package assembly

import (
	"fmt"
	"strings"

	"github.com/ctxhost/ctxhost/sdk"
)

// PickFormat returns the format the request asks for among formats; an
// empty request format picks the first (the assembler's default). An
// unknown format is an error wrapping sdk.ErrInvalidArgs that names it and
// the formats on offer.
func PickFormat(requested string, formats []sdk.FormatInfo) (sdk.FormatInfo, error) {
	if requested == "" && len(formats) > 0 {
		return formats[0], nil
	}
	names := make([]string, len(formats))
	for i, f := range formats {
		if f.Name == requested {
			return f, nil
		}
		names[i] = f.Name
	}
	return sdk.FormatInfo{}, fmt.Errorf("%w: unknown format %q (known: %s)",
		sdk.ErrInvalidArgs, requested, strings.Join(names, ", "))
}
