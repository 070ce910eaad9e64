package httpapi_test

import (
	"testing"

	"github.com/provider/coreapi/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }
