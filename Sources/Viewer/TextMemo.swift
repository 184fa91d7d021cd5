import Foundation

/// A line of text the render loop shows or looks things up by, rebuilt only when what it is made
/// from changes: comparing the parts allocates nothing, building the string does (steady state:
/// no allocation per frame, see `AllocationCounter`).
struct TextMemo<Parts: Equatable> {
    private var parts: Parts?
    private var text = ""

    /// The text for `parts`: the last one when the parts are the same, else `make(parts)`.
    mutating func text(for parts: Parts, _ make: (Parts) -> String) -> String {
        if parts != self.parts {
            self.parts = parts
            text = make(parts)
        }
        return text
    }
}
