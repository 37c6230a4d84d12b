package host

import (
	"math"

	"github.com/ctxhost/ctxhost/sdk"
)

// budgetOf computes the budget of components counted in tokens. Utilization
// and status use the calibrated figure (raw × calibration); Used stays raw.
func budgetOf(cfg Config, calibration float64, counted []countedComponent) sdk.Budget {
	b := sdk.Budget{
		Window:      cfg.Window,
		Reserved:    cfg.Reserved,
		Available:   cfg.Window - cfg.Reserved,
		Calibration: calibration,
		Components:  make([]sdk.ComponentTokens, 0, len(counted)),
	}
	for _, c := range counted {
		b.Used += c.tokens
		b.Components = append(b.Components, sdk.ComponentTokens{Name: c.comp.Name, Tokens: c.tokens})
	}
	b.Overhead = framingOverhead(cfg.History.Options.Framing, counted)
	b.Used += b.Overhead
	b.CalibratedUsed = calibrate(b.Used, calibration)
	b.Utilization = float64(b.CalibratedUsed) / float64(b.Available)
	b.Status = statusOf(b.Utilization, cfg.Thresholds)
	return b
}

// calibrate scales raw tokens by the calibration ratio, rounding up.
func calibrate(raw int, calibration float64) int {
	if calibration <= 0 || calibration == 1 {
		return raw
	}
	return int(math.Ceil(float64(raw) * calibration))
}

// uncalibrate converts calibrated tokens back to raw tokens, rounding down.
func uncalibrate(cal int, calibration float64) int {
	if calibration <= 0 || calibration == 1 {
		return cal
	}
	return int(math.Floor(float64(cal) / calibration))
}

func statusOf(utilization float64, t Thresholds) string {
	switch {
	case utilization >= t.Critical:
		return sdk.StatusCritical
	case utilization >= t.Warning:
		return sdk.StatusWarning
	}
	return sdk.StatusOK
}

// framingOverhead is what the provider adds around the components beyond
// the history's messages (which count their own framing): the request,
// the system message, and the final user message that carries context and
// input.
func framingOverhead(f *sdk.Framing, counted []countedComponent) int {
	if f == nil {
		return 0
	}
	n := f.PerRequest
	system, final := false, false
	for _, c := range counted {
		switch {
		case c.tokens == 0:
		case c.comp.Slot == sdk.SlotSystem:
			system = true
		case c.comp.Slot == sdk.SlotContext || c.comp.Slot == sdk.SlotInput:
			final = true
		}
	}
	if system {
		n += f.PerMessage
	}
	if final {
		n += f.PerMessage
	}
	return n
}
