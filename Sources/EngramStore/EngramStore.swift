// EngramStore: see ARCHITECTURE.md for this layer's role.
