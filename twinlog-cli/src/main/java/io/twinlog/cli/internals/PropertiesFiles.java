package io.twinlog.cli.internals;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;

/** Reads the properties files the command takes ({@code --command-config}, {@code --source-config-file}). */
public final class PropertiesFiles {
    private PropertiesFiles() {
    }

    /**
     * @param option the option that named the file, for the message
     * @return its keys and values, sorted by key
     * @throws CommandException (usage) when the file is missing or unreadable
     */
    public static Map<String, String> read(String option, Path file) {
        Properties properties = new Properties();
        try (Reader reader = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            properties.load(reader);
        } catch (NoSuchFileException e) {
            throw CommandException.usage("Could not read " + option + " '" + file + "': no such file");
        } catch (IOException | IllegalArgumentException e) {
            throw CommandException.usage("Could not read " + option + " '" + file + "': " + e.getMessage());
        }
        Map<String, String> configs = new TreeMap<>();
        properties.stringPropertyNames().forEach(k -> configs.put(k, properties.getProperty(k)));
        return configs;
    }
}
