package core

import (
	"fmt"

	"github.com/google/uuid"
)

// A product or plan that a request body names is the client's string until the transport
// parses it, once, with ProductNamed or PlanNamed: the domain takes the uuid.UUID. A string
// that is not a UUID names nothing, so it gets the answer of an unknown id (EUnprocessable at
// the field), not the one of malformed input.

// ProductNamed parses the product_id of a request body: anything but a UUID is UnknownProduct.
func ProductNamed(raw string) (uuid.UUID, error) { return parseNamed(raw, UnknownProduct) }

// PlanNamed parses the plan_id of a request body: anything but a UUID is UnknownPlan.
func PlanNamed(raw string) (uuid.UUID, error) { return parseNamed(raw, UnknownPlan) }

func parseNamed(raw string, unknown func(id string) error) (uuid.UUID, error) {
	id, err := uuid.Parse(raw)
	if err != nil {
		return uuid.Nil, unknown(raw)
	}
	return id, nil
}

// UnknownProduct refuses the product_id of a request body that names no product.
func UnknownProduct(id string) error {
	return Unprocessable("/product_id", "unknown_product", fmt.Sprintf("Product %s does not exist.", id))
}

// UnknownPlan refuses the plan_id of a request body that names no plan.
func UnknownPlan(id string) error {
	return Unprocessable("/plan_id", "unknown_plan", fmt.Sprintf("Plan %s does not exist.", id))
}
