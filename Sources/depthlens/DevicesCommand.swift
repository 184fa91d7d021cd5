import ArgumentParser
import DepthKit
import Foundation
import GPUKit

struct DevicesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "devices",
        abstract: "List the Vulkan devices found, the one depthlens would choose, and why the others were rejected."
    )

    @Option(help: "Prefer this device (index or part of the name) over automatic choice.")
    var device: String?
    @Flag(help: "Print JSON.")
    var json = false

    func run() throws {
        GPUBackend.select(device: device)
        let list = try GPUDevices.list()
        if json {
            let enc = JSONEncoder()
            enc.outputFormatting = [.prettyPrinted, .sortedKeys]
            print(String(decoding: try enc.encode(list), as: UTF8.self))
            return
        }
        for d in list { print(d.description) }
    }
}
