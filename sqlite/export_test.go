package sqlite

import "database/sql/driver"

// WrapDriver makes db open its connections through wrap, to inject faults
// below the store. Call it before Open.
func WrapDriver(db *DB, wrap func(driver.Driver) driver.Driver) { db.wrapDriver = wrap }
