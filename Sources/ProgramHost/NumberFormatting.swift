/// A number as a user typed it in a message: whole numbers without ".0" ("120", "97.3").
package func formatNumber(_ x: Double) -> String {
    x == x.rounded() && abs(x) < 1e15 ? String(Int64(x)) : String(x)
}
