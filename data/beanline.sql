-- Placeholder, replaced by the full Beanline generator.
CREATE TABLE stores (store_id INTEGER PRIMARY KEY, name TEXT NOT NULL);
