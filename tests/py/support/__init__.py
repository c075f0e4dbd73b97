"""What several test modules share: numeric comparisons, the op programs every device runs
against the reference, device markers, a child Python without IREE's compiler. Test modules
import from here, never from one another."""
