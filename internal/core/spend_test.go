package core_test

import (
	"math"
	"math/big"
	"testing"

	"github.com/provider/coreapi/internal/core"
)

// TestSpendControl_WarningAt holds WarningAt to ceil(limit × percent / 100) computed exactly,
// up to the largest limit the schema takes.
func TestSpendControl_WarningAt(t *testing.T) {
	t.Parallel()
	for _, limit := range []int64{0, 1, 4, 99, 100, 101, 12345, 200_000_000_000_000_000, math.MaxInt64 - 1, math.MaxInt64} {
		for _, percent := range []int{1, 33, 50, 80, 99, 100} {
			c := core.SpendControl{HardOperationLimit: &limit, WarningThresholdPercent: percent}
			got, ok := c.WarningAt()
			want := new(big.Int).Mul(big.NewInt(limit), big.NewInt(int64(percent)))
			want.Add(want, big.NewInt(99)).Quo(want, big.NewInt(100))
			if !ok || got != want.Int64() {
				t.Errorf("WarningAt(%d, %d%%) = %d, want %s", limit, percent, got, want)
			}
		}
	}
}
