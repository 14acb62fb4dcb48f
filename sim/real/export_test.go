package real

// StartStallMeter gives the package's external tests the stall meter:
// how long this process was kept from running while it ran.
func StartStallMeter() *stallMeter { return startStallMeter() }
